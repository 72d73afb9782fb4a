//! The bytes the application handed over that are not yet acknowledged: a
//! fixed-capacity ring starting at `snd_una`, so acknowledging is O(1) and
//! nothing is copied except into outgoing packets.

#[derive(Clone, Debug)]
pub(crate) struct SendBuffer {
    storage: Box<[u8]>,
    head: usize,
    len: usize,
}

impl SendBuffer {
    pub(crate) fn new(capacity: usize) -> SendBuffer {
        SendBuffer {
            storage: vec![0; capacity.max(1)].into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn free(&self) -> usize {
        self.storage.len() - self.len
    }

    /// The largest contiguous free region after the buffered bytes, for the
    /// application to write into; then call [`SendBuffer::commit`].
    pub(crate) fn writable(&mut self) -> &mut [u8] {
        let cap = self.storage.len();
        let tail = (self.head + self.len) % cap;
        let end = if tail >= self.head && self.len < cap {
            cap
        } else {
            self.head
        };
        let end = if self.len == cap { tail } else { end };
        &mut self.storage[tail..end]
    }

    /// Marks `n` bytes of the writable region as filled.
    pub(crate) fn commit(&mut self, n: usize) {
        self.len = (self.len + n).min(self.storage.len());
    }

    /// Drops `n` acknowledged bytes from the front.
    pub(crate) fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.head = (self.head + n) % self.storage.len();
        self.len -= n;
    }

    /// Copies the bytes at `offset..offset + out.len()` from the front.
    pub(crate) fn copy_out(&self, offset: usize, out: &mut [u8]) {
        let cap = self.storage.len();
        let start = (self.head + offset) % cap;
        let first = out.len().min(cap - start);
        out[..first].copy_from_slice(&self.storage[start..start + first]);
        let rest = out.len() - first;
        out[first..].copy_from_slice(&self.storage[..rest]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(b: &mut SendBuffer, data: &[u8]) -> usize {
        let mut done = 0;
        while done < data.len() {
            let slot = b.writable();
            let n = slot.len().min(data.len() - done);
            if n == 0 {
                break;
            }
            slot[..n].copy_from_slice(&data[done..done + n]);
            b.commit(n);
            done += n;
        }
        done
    }

    #[test]
    fn wraps_around_and_reads_back_in_order() {
        let mut b = SendBuffer::new(8);
        assert_eq!(write(&mut b, b"abcdef"), 6);
        b.consume(4);
        assert_eq!(write(&mut b, b"ghijklmn"), 6);
        assert_eq!(b.free(), 0);
        let mut out = [0; 8];
        b.copy_out(0, &mut out);
        assert_eq!(&out, b"efghijkl");
        let mut out = [0; 3];
        b.copy_out(4, &mut out);
        assert_eq!(&out, b"ijk");
        assert!(b.writable().is_empty());
    }

    #[test]
    fn consume_more_than_buffered_empties() {
        let mut b = SendBuffer::new(4);
        write(&mut b, b"ab");
        b.consume(10);
        assert_eq!((b.len(), b.free()), (0, 4));
    }
}
