//! `spamsort serve` for the spamd benches: the release binary in its own process (so its
//! memory is measured alone), on an ephemeral 127.0.0.1 port, with a model trained on the
//! bench corpus; its resident memory read from /proc.

use spamsort::{LabeledCorpus, SpamFilter, TrainParams};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// A running server, killed on drop if not stopped.
pub struct Served {
    /// The server process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    _model_dir: tempfile::TempDir,
}

impl Served {
    /// Trains a model on `corpus`, saves it to a temporary directory and starts
    /// `target/release/spamsort serve` on it with `extra` arguments.
    pub fn start(corpus: &LabeledCorpus, extra: &[&str]) -> Served {
        let mut filter = SpamFilter::train(corpus, &TrainParams::default()).expect("train");
        let dir = tempfile::tempdir().expect("temp dir");
        let model = dir.path().join("model.spamsort");
        filter
            .save(&spamsort::model_file::lock_for_update(&model).expect("lock"))
            .expect("save");
        let binary =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/spamsort");
        assert!(
            binary.exists(),
            "build the server first: cargo build --release"
        );
        let mut child = Command::new(&binary)
            .args(["serve", "--listen", "127.0.0.1:0", "--model"])
            .arg(&model)
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start spamsort serve");
        let addr = listening_address(&mut child);
        Served {
            child,
            addr,
            _model_dir: dir,
        }
    }

    /// A `/proc/PID/status` memory field (`VmRSS:`, `VmHWM:`) of the server, in KiB.
    pub fn memory_kib(&self, field: &str) -> u64 {
        super::memory_kib(self.child.id(), field)
    }

    /// Sends SIGTERM and waits: how the server exited.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        self.child.wait().expect("server exit")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads the server's log until it says where it listens, then keeps draining it.
fn listening_address(server: &mut Child) -> SocketAddr {
    use std::io::BufRead;
    let mut log = std::io::BufReader::new(server.stderr.take().expect("piped stderr"));
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            log.read_line(&mut line).unwrap_or(0) > 0,
            "server exited: {line}"
        );
        if let Some(addr) = line.trim().split("listening on ").nth(1) {
            std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
            return addr.parse().expect("address");
        }
    }
}
