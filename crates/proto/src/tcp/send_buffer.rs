//! The bytes the application handed over that are not yet acknowledged: a
//! ring starting at `snd_una`, so acknowledging is O(1) and nothing is
//! copied except into outgoing packets.
//!
//! The ring holds at most `limit` bytes (`send_buffer`, 256 KiB by default)
//! but its storage is allocated on demand: a connection that never has much
//! to send (an idle flow, a request) holds a page, not the whole limit, two
//! agents a flow — which made a 1,000-flow mesh cost hundreds of MB.
//!
//! What the application is offered does not depend on the storage: each
//! read offers the contiguous free region of a ring of `limit` bytes (the
//! *virtual* ring, whose head is the bytes acknowledged so far modulo the
//! limit), as a fully allocated ring would. While the storage is smaller
//! than that region the application writes into a per-thread scratch
//! buffer and the bytes it wrote are copied in; once the storage reaches
//! the limit it is the virtual ring itself and is written directly. So how
//! much an application reads at a time, and hence every result, is the
//! same as with the buffer allocated up front.

use std::cell::RefCell;

use crate::net::AppRead;

/// The first allocation: one page, enough for a few segments.
const FIRST_ALLOCATION: usize = 4096;

thread_local! {
    /// Where an application writes while the storage cannot hold the region
    /// it is offered; as large as the largest such region so far.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

#[derive(Clone, Debug)]
pub(crate) struct SendBuffer {
    /// The buffered bytes, a ring of `storage.len()` ≤ `limit` bytes.
    storage: Box<[u8]>,
    /// The most bytes the buffer may hold (`send_buffer`).
    limit: usize,
    /// Where the first buffered byte is in `storage`; equal to `virtual_head`
    /// once the storage has reached `limit`.
    head: usize,
    /// Where the first buffered byte is in the virtual ring of `limit` bytes.
    virtual_head: usize,
    len: usize,
}

impl SendBuffer {
    pub(crate) fn new(limit: usize) -> SendBuffer {
        SendBuffer {
            storage: Box::default(),
            limit: limit.max(1),
            head: 0,
            virtual_head: 0,
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn free(&self) -> usize {
        self.limit - self.len
    }

    /// Offers the application the contiguous free region of the virtual
    /// ring (see the module's comment) through `read`, and keeps what it
    /// wrote there.
    pub(crate) fn fill(&mut self, read: impl FnOnce(&mut [u8]) -> AppRead) -> AppRead {
        let (start, end) = free_region(self.virtual_head, self.len, self.limit);
        if self.storage.len() == self.limit {
            let result = read(&mut self.storage[start..end]);
            if let AppRead::Data(n) = result {
                self.len += n.min(end - start);
            }
            return result;
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            if scratch.len() < end - start {
                // Its old bytes are never read: a fresh zeroed allocation
                // (pages the kernel zeroes on first touch) rather than a
                // resize that writes every byte.
                *scratch = vec![0; end - start];
            }
            let slot = &mut scratch[..end - start];
            let result = read(slot);
            if let AppRead::Data(n) = result {
                self.append(&slot[..n.min(slot.len())]);
            }
            result
        })
    }

    /// Appends bytes written outside the storage, growing it as needed.
    fn append(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > self.storage.len() {
            self.grow(self.len + bytes.len());
        }
        let cap = self.storage.len();
        let tail = (self.head + self.len) % cap;
        let first = bytes.len().min(cap - tail);
        self.storage[tail..tail + first].copy_from_slice(&bytes[..first]);
        self.storage[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.len += bytes.len();
    }

    /// Reallocates the storage to hold at least `need` bytes: doubling, so
    /// a growing sender copies each byte O(1) times, and at most `limit`.
    /// At the limit the bytes take their place in the virtual ring.
    fn grow(&mut self, need: usize) {
        let mut cap = self.storage.len().max(FIRST_ALLOCATION);
        while cap < need {
            cap *= 2;
        }
        let cap = cap.min(self.limit);
        let head = if cap == self.limit {
            self.virtual_head
        } else {
            0
        };
        let mut storage = vec![0; cap].into_boxed_slice();
        let first = self.len.min(cap - head);
        self.copy_out(0, &mut storage[head..head + first]);
        self.copy_out(first, &mut storage[..self.len - first]);
        self.storage = storage;
        self.head = head;
    }

    /// Drops `n` acknowledged bytes from the front.
    pub(crate) fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        if n == 0 {
            return;
        }
        self.head = (self.head + n) % self.storage.len();
        self.virtual_head = (self.virtual_head + n) % self.limit;
        self.len -= n;
    }

    /// Appends the `len` bytes at `offset` from the front to `out`, without
    /// zeroing room for them first (the per-packet path).
    pub(crate) fn append_to(&self, offset: usize, len: usize, out: &mut Vec<u8>) {
        if len == 0 {
            return;
        }
        let cap = self.storage.len();
        let start = (self.head + offset) % cap;
        let first = len.min(cap - start);
        out.extend_from_slice(&self.storage[start..start + first]);
        out.extend_from_slice(&self.storage[..len - first]);
    }

    /// Copies the bytes at `offset..offset + out.len()` from the front.
    pub(crate) fn copy_out(&self, offset: usize, out: &mut [u8]) {
        if out.is_empty() {
            return;
        }
        let cap = self.storage.len();
        let start = (self.head + offset) % cap;
        let first = out.len().min(cap - start);
        out[..first].copy_from_slice(&self.storage[start..start + first]);
        let rest = out.len() - first;
        out[first..].copy_from_slice(&self.storage[..rest]);
    }
}

/// The largest contiguous free region after `len` bytes starting at `head`
/// in a ring of `cap` bytes: `start..end`, empty when the ring is full.
fn free_region(head: usize, len: usize, cap: usize) -> (usize, usize) {
    let tail = (head + len) % cap;
    if len == cap {
        (tail, tail)
    } else if tail >= head {
        (tail, cap)
    } else {
        (tail, head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes as much of `data` as the buffer takes, one offered region at
    /// a time; returns the bytes written and the regions' lengths.
    fn write(b: &mut SendBuffer, data: &[u8]) -> (usize, Vec<usize>) {
        let (mut done, mut offered) = (0, Vec::new());
        loop {
            let mut n = 0;
            b.fill(|slot| {
                offered.push(slot.len());
                n = slot.len().min(data.len() - done);
                slot[..n].copy_from_slice(&data[done..done + n]);
                AppRead::Data(n)
            });
            done += n;
            if n == 0 {
                return (done, offered);
            }
        }
    }

    fn contents(b: &SendBuffer) -> Vec<u8> {
        let mut out = vec![0; b.len()];
        b.copy_out(0, &mut out);
        out
    }

    #[test]
    fn wraps_around_and_reads_back_in_order() {
        let mut b = SendBuffer::new(8);
        assert_eq!(write(&mut b, b"abcdef").0, 6);
        b.consume(4);
        assert_eq!(write(&mut b, b"ghijklmn").0, 6);
        assert_eq!(b.free(), 0);
        assert_eq!(contents(&b), b"efghijkl");
        let mut out = [0; 3];
        b.copy_out(4, &mut out);
        assert_eq!(&out, b"ijk");
        let mut appended = b"hdr".to_vec();
        b.append_to(2, 6, &mut appended);
        assert_eq!(appended, b"hdrghijkl");
        assert_eq!(write(&mut b, b"x"), (0, vec![0]));
    }

    #[test]
    fn consume_more_than_buffered_empties() {
        let mut b = SendBuffer::new(4);
        write(&mut b, b"ab");
        b.consume(10);
        assert_eq!((b.len(), b.free()), (0, 4));
    }

    /// The regions a ring of `limit` bytes allocated up front offers.
    fn full_ring_region(acked: usize, len: usize, limit: usize) -> usize {
        let (start, end) = free_region(acked % limit, len, limit);
        end - start
    }

    #[test]
    fn offers_what_a_ring_allocated_up_front_offers() {
        let limit = 20_000;
        let mut b = SendBuffer::new(limit);
        let mut model = std::collections::VecDeque::new();
        let (mut next, mut acked, mut rng) = (0u32, 0usize, 12_345u64);
        for _ in 0..2_000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let size = (rng % 9_000) as usize;
            if rng % 3 == 0 {
                b.consume(size);
                let n = size.min(model.len());
                model.drain(..n);
                acked += n;
            } else {
                let expect = full_ring_region(acked, model.len(), limit);
                let mut offered = 0;
                b.fill(|slot| {
                    offered = slot.len();
                    let n = size.min(slot.len());
                    for byte in &mut slot[..n] {
                        *byte = next as u8;
                        model.push_back(next as u8);
                        next += 1;
                    }
                    AppRead::Data(n)
                });
                assert_eq!(offered, expect);
            }
            assert_eq!(contents(&b), model.iter().copied().collect::<Vec<_>>());
        }
        assert_eq!(b.storage.len(), limit);
    }

    #[test]
    fn storage_grows_only_as_far_as_the_bytes_held() {
        let mut b = SendBuffer::new(256 * 1024);
        assert!(b.storage.is_empty());
        for _ in 0..100 {
            write(&mut b, &[7; 100][..]);
            b.consume(100);
        }
        assert_eq!(b.storage.len(), FIRST_ALLOCATION);
        let (n, _) = write(&mut b, &[1; 10_000]);
        assert_eq!((n, b.storage.len()), (10_000, 4 * FIRST_ALLOCATION));
        write(&mut b, &vec![2; 300 * 1024]);
        assert_eq!((b.len(), b.storage.len()), (256 * 1024, 256 * 1024));
    }
}
