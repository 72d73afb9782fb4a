//! The sender's cyclic buffer of the most recent blocks it sent in answer
//! to pull requests (§3.3.1). Every REQ repeats the receiver's three most
//! recent pull blocks; a block in a REQ that the cyclic buffer does not
//! hold is a pull request the sender never saw, so it serves it now.

use std::collections::VecDeque;

use joulenet_wire::rcp::{RequestBlock, MAX_BLOCKS};

#[derive(Clone, Debug, Default)]
pub(crate) struct CyclicBuffer {
    recent: VecDeque<RequestBlock>,
}

impl CyclicBuffer {
    pub fn contains(&self, b: RequestBlock) -> bool {
        self.recent.contains(&b)
    }

    pub fn push(&mut self, b: RequestBlock) {
        self.recent.retain(|&r| r != b);
        self.recent.push_back(b);
        while self.recent.len() > MAX_BLOCKS {
            self.recent.pop_front();
        }
    }

    /// Blocks of a REQ (newest first) that were never served, oldest first.
    pub fn missing(&self, blocks: &[RequestBlock]) -> Vec<RequestBlock> {
        blocks
            .iter()
            .rev()
            .copied()
            .filter(|&b| !self.contains(b))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: u32) -> RequestBlock {
        RequestBlock {
            start: s,
            end: s + 10,
        }
    }

    #[test]
    fn a_lost_pull_shows_as_a_mismatch() {
        let mut c = CyclicBuffer::default();
        c.push(b(0));
        // The pull for 10 was lost; the pull for 20 carries [10, 0].
        assert_eq!(c.missing(&[b(10), b(0)]), vec![b(10)]);
        c.push(b(10));
        c.push(b(20));
        assert!(c.missing(&[b(20), b(10), b(0)]).is_empty());
        c.push(b(30));
        assert!(!c.contains(b(0)), "only three blocks are kept");
    }
}
