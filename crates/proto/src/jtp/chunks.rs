//! A rate-based source's view of its application: packet-sized chunks,
//! read one ahead so the last chunk can carry FIN. Shared by the JTP source
//! and the ATP-like baseline's source (`crate::atp`), whose packets are
//! numbered, not byte ranges.

use crate::net::{AppRead, Net};

pub struct Chunks {
    size: usize,
    /// A chunk read ahead of the one being sent, to know which is last.
    ahead: Option<Vec<u8>>,
    /// The application said it has no more data.
    app_done: bool,
    /// The last chunk (FIN) has been handed out.
    fin_taken: bool,
}

impl Chunks {
    /// Chunks of at most `size` bytes.
    pub fn new(size: usize) -> Chunks {
        Chunks {
            size,
            ahead: None,
            app_done: false,
            fin_taken: false,
        }
    }

    /// Whether the last chunk has been handed out.
    pub fn fin_taken(&self) -> bool {
        self.fin_taken
    }

    fn read(&mut self, net: &mut dyn Net) -> Option<Vec<u8>> {
        if let Some(c) = self.ahead.take() {
            return Some(c);
        }
        if self.app_done {
            return None;
        }
        let mut buf = vec![0; self.size];
        match net.app_read(&mut buf) {
            AppRead::Data(n) => {
                buf.truncate(n);
                Some(buf)
            }
            AppRead::Pending => None,
            AppRead::Finished => {
                self.app_done = true;
                None
            }
        }
    }

    /// The next chunk and whether it is the last, if the application has
    /// one now.
    pub fn next(&mut self, net: &mut dyn Net) -> Option<(Vec<u8>, bool)> {
        if self.fin_taken {
            return None;
        }
        let next = match self.read(net) {
            Some(chunk) => {
                // Read one ahead to know whether this chunk is the last.
                let after = self.read(net);
                let last = after.is_none() && self.app_done;
                self.ahead = after;
                Some((chunk, last))
            }
            // Nothing was ever sent or the data ended on a chunk boundary
            // with no read-ahead: an empty FIN closes the stream.
            None if self.app_done => Some((Vec::new(), true)),
            None => None,
        };
        self.fin_taken = next.as_ref().is_some_and(|(_, fin)| *fin);
        next
    }
}
