//! The block (§3.1, Figure 1): a large run of contiguous data, split into
//! frames, sent a TXOP's worth of frames per link-layer burst.
//!
//! [`BlockBuf`] holds a block's frames at one node: all of them at the
//! source, whichever arrived (or were overheard) at a relay or the
//! destination. [`take_block`] cuts the next block from the application,
//! never waiting idly for more data (§4.2).

use super::bitmap::FrameBitmap;
use crate::net::AppRead;

/// A block's size: its frame count and its length in bytes, as a BSYN says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub frames: u16,
    pub block_len: u32,
}

/// Why a frame or a shape does not fit the block as known so far.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BlockError {
    /// The frame's index is past the block's frame count.
    BeyondBlock,
    /// A second BSYN for the same block names another shape.
    ShapeConflict,
    /// The frames held add up to more bytes than the block has.
    TooLong,
}

/// The frames of one block held at one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockBuf {
    frames: Vec<Option<Vec<u8>>>,
    held: FrameBitmap,
    shape: Option<Shape>,
    bytes: usize,
}

/// Frames of `frame_len` bytes that one TXOP of `txop_bytes` carries (at
/// least one).
pub fn frames_per_txop(txop_bytes: usize, frame_len: usize) -> usize {
    (txop_bytes / frame_len.max(1)).max(1)
}

impl BlockBuf {
    /// A block with nothing held and no shape known yet.
    pub fn new() -> BlockBuf {
        BlockBuf::default()
    }

    /// A whole block cut from `data` into frames of `frame_len` bytes (the
    /// last may be shorter). `data` must be non-empty and at most
    /// `frame_len · 65535` bytes.
    pub fn from_data(data: &[u8], frame_len: usize) -> BlockBuf {
        let frame_len = frame_len.max(1);
        let frames: Vec<Option<Vec<u8>>> =
            data.chunks(frame_len).map(|c| Some(c.to_vec())).collect();
        let n = frames.len();
        BlockBuf {
            frames,
            held: FrameBitmap::full(n),
            shape: Some(Shape {
                frames: n as u16,
                block_len: data.len() as u32,
            }),
            bytes: data.len(),
        }
    }

    pub fn shape(&self) -> Option<Shape> {
        self.shape
    }

    /// Learns the block's shape from a BSYN; frames already held beyond it
    /// are an error (and so is a second, different shape).
    pub fn set_shape(&mut self, shape: Shape) -> Result<(), BlockError> {
        if let Some(known) = self.shape {
            return if known == shape {
                Ok(())
            } else {
                Err(BlockError::ShapeConflict)
            };
        }
        let n = shape.frames as usize;
        if self.held.held().any(|i| i >= n) {
            return Err(BlockError::BeyondBlock);
        }
        if self.bytes > shape.block_len as usize {
            return Err(BlockError::TooLong);
        }
        self.frames.resize(n, None);
        self.held.resize(n);
        self.shape = Some(shape);
        Ok(())
    }

    /// Stores frame `i`; `Ok(true)` if it is new, `Ok(false)` if it was
    /// already held (the copy is ignored).
    pub fn insert(&mut self, i: u16, payload: &[u8]) -> Result<bool, BlockError> {
        let i = i as usize;
        if let Some(shape) = self.shape {
            if i >= shape.frames as usize {
                return Err(BlockError::BeyondBlock);
            }
            if self.bytes + payload.len() > shape.block_len as usize && !self.held.get(i) {
                return Err(BlockError::TooLong);
            }
        }
        if self.held.get(i) {
            return Ok(false);
        }
        if i >= self.frames.len() {
            self.frames.resize(i + 1, None);
        }
        self.frames[i] = Some(payload.to_vec());
        self.held.set(i);
        self.bytes += payload.len();
        Ok(true)
    }

    /// Frame `i`, if held.
    pub fn frame(&self, i: usize) -> Option<&[u8]> {
        self.frames.get(i)?.as_deref()
    }

    /// Which frames are held.
    pub fn held(&self) -> &FrameBitmap {
        &self.held
    }

    /// The BACK bitmap for this block as a BSYN of `frames` frames asks it.
    pub fn back(&self, frames: u16) -> FrameBitmap {
        let mut b = self.held.clone();
        b.resize(frames as usize);
        b
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The shape is known and every frame is held, adding up to the block.
    pub fn is_complete(&self) -> bool {
        self.shape.is_some_and(|s| {
            self.held.count() == s.frames as usize && self.bytes == s.block_len as usize
        })
    }

    /// The block's bytes, in order, once complete.
    pub fn assemble(&self) -> Option<Vec<u8>> {
        if !self.is_complete() {
            return None;
        }
        let mut out = Vec::with_capacity(self.bytes);
        for f in self.frames.iter().flatten() {
            out.extend_from_slice(f);
        }
        Some(out)
    }

    /// Frame indices in TXOPs of `per_txop` frames: the order a first round
    /// sends them in, one burst each.
    pub fn txops(&self, per_txop: usize) -> Vec<Vec<u16>> {
        let idx: Vec<u16> = self.held.held().map(|i| i as u16).collect();
        idx.chunks(per_txop.max(1)).map(<[u16]>::to_vec).collect()
    }
}

/// The next block cut from the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub data: Vec<u8>,
    /// The application has no more data, ever.
    pub finished: bool,
}

/// Reads what the application has now, up to `max_block` bytes: a block is
/// cut as soon as the application says it has nothing more *now* (Hop never
/// waits idly for more data to fill a block, §4.2). `None` when there is
/// nothing to send and the stream goes on.
pub fn take_block(mut read: impl FnMut(&mut [u8]) -> AppRead, max_block: usize) -> Option<Cut> {
    let mut data = vec![0u8; max_block];
    let mut len = 0;
    let mut finished = false;
    while len < max_block {
        match read(&mut data[len..]) {
            AppRead::Data(n) => len += n.min(max_block - len),
            AppRead::Pending => break,
            AppRead::Finished => {
                finished = true;
                break;
            }
        }
    }
    data.truncate(len);
    (len > 0 || finished).then_some(Cut { data, finished })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_splits_into_frames_and_txops() {
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        let b = BlockBuf::from_data(&data, 1400);
        assert_eq!(
            b.shape(),
            Some(Shape {
                frames: 8,
                block_len: 10_000
            })
        );
        assert_eq!(b.frame(7).unwrap().len(), 10_000 - 7 * 1400);
        let per = frames_per_txop(8192, 1400);
        assert_eq!(per, 5);
        assert_eq!(b.txops(per), vec![vec![0, 1, 2, 3, 4], vec![5, 6, 7]]);
        assert_eq!(b.assemble().unwrap(), data);
    }

    #[test]
    fn a_megabyte_block_fits_the_frame_count() {
        let b = BlockBuf::from_data(&vec![1; 1 << 20], 1400);
        assert_eq!(b.shape().unwrap().frames, 749);
        assert!(b.is_complete());
    }

    #[test]
    fn frames_arrive_in_any_order_before_or_after_the_shape() {
        let data = b"abcdefghij";
        let whole = BlockBuf::from_data(data, 3);
        let mut b = BlockBuf::new();
        assert_eq!(b.insert(3, whole.frame(3).unwrap()), Ok(true));
        assert_eq!(b.insert(0, whole.frame(0).unwrap()), Ok(true));
        assert_eq!(b.insert(0, b"zzz"), Ok(false));
        assert!(!b.is_complete());
        b.set_shape(whole.shape().unwrap()).unwrap();
        assert_eq!(b.back(4).to_back(), vec![0b1001_0000]);
        assert_eq!(b.insert(4, b"x"), Err(BlockError::BeyondBlock));
        b.insert(2, whole.frame(2).unwrap()).unwrap();
        b.insert(1, whole.frame(1).unwrap()).unwrap();
        assert_eq!(b.assemble().unwrap(), data);
    }

    #[test]
    fn inconsistent_shapes_and_lengths_are_refused() {
        let mut b = BlockBuf::new();
        b.insert(5, b"abc").unwrap();
        assert_eq!(
            b.set_shape(Shape {
                frames: 2,
                block_len: 9
            }),
            Err(BlockError::BeyondBlock)
        );
        let mut b = BlockBuf::new();
        b.set_shape(Shape {
            frames: 2,
            block_len: 4,
        })
        .unwrap();
        assert_eq!(
            b.set_shape(Shape {
                frames: 3,
                block_len: 4
            }),
            Err(BlockError::ShapeConflict)
        );
        b.insert(0, b"abc").unwrap();
        assert_eq!(b.insert(1, b"de"), Err(BlockError::TooLong));
    }

    #[test]
    fn take_block_never_waits_for_more_data() {
        // The application has 3000 bytes now, then would have more later.
        let mut chunks = vec![AppRead::Data(1000), AppRead::Data(2000), AppRead::Pending];
        chunks.reverse();
        let cut = take_block(|_| chunks.pop().unwrap_or(AppRead::Pending), 1 << 20).unwrap();
        assert_eq!(cut.data.len(), 3000);
        assert!(!cut.finished);
        // Nothing now: no block.
        assert_eq!(take_block(|_| AppRead::Pending, 1 << 20), None);
        // A block never exceeds the maximum.
        let cut = take_block(|buf| AppRead::Data(buf.len()), 4096).unwrap();
        assert_eq!(cut.data.len(), 4096);
        // End of stream with the last bytes, and alone.
        let mut once = Some(AppRead::Data(10));
        let cut = take_block(|_| once.take().unwrap_or(AppRead::Finished), 4096).unwrap();
        assert_eq!((cut.data.len(), cut.finished), (10, true));
        let cut = take_block(|_| AppRead::Finished, 4096).unwrap();
        assert!(cut.data.is_empty() && cut.finished);
    }
}
