//! SIGINT and SIGTERM as a request to stop: the server's loop sees the
//! flag within 100 ms, ends every connection (each sender hears why, each
//! unfinished partial file is removed) and returns, where the default action
//! would kill the process and leave partial files behind. A second signal
//! kills as usual (`SA_RESETHAND`), for a server that does not stop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

extern "C" fn on_signal(_: libc::c_int) {
    // Async-signal-safe: after initialisation `OnceLock::get` is an atomic
    // load, and the store is an atomic store.
    if let Some(s) = STOP.get() {
        s.store(true, Ordering::Relaxed);
    }
}

/// Installs the handlers (once per process) and returns the flag they set.
pub fn stop_on_termination() -> Result<Arc<AtomicBool>, String> {
    let flag = Arc::clone(STOP.get_or_init(|| Arc::new(AtomicBool::new(false))));
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; the handler only does an
        // atomic load and store; sa_mask is initialised by sigemptyset.
        let r = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(format!(
                "installing a signal handler: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(flag)
}
