# IMAPSieve: run when a message is moved or copied OUT OF the Junk folder into any other folder
# (see 90-spamsort-imapsieve.conf). Hands a copy of the message to spamsort-learn.sh, which
# teaches spamsort that it is ham. Moving spam from Junk to Trash (deleting it) teaches nothing.
require ["vnd.dovecot.pipe", "copy", "imapsieve", "environment", "variables"];

if environment :matches "imap.mailbox" "*" {
  set "mailbox" "${1}";
}
if string "${mailbox}" "Trash" {
  stop;
}

if environment :matches "imap.user" "*" {
  set "username" "${1}";
}

pipe :copy "spamsort-learn.sh" ["ham", "${username}"];
