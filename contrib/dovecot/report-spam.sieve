# IMAPSieve: run when a message is moved or copied INTO the Junk folder (see
# 90-spamsort-imapsieve.conf). Hands a copy of the message to spamsort-learn.sh, which teaches
# spamsort that it is spam. The message itself is left alone (":copy").
require ["vnd.dovecot.pipe", "copy", "imapsieve", "environment", "variables"];

if environment :matches "imap.user" "*" {
  set "username" "${1}";
}

pipe :copy "spamsort-learn.sh" ["spam", "${username}"];
