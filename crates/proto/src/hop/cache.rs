//! The frames a node holds (§3.2): what it received as a hop of a flow and
//! what it overheard of others' transfers. A virtual retransmission asks
//! each next hop what it holds here, so a block cached along the route is
//! not sent again.
//!
//! Bounded in bytes (ours: the paper keeps every block in memory): when
//! full, the oldest blocks that the node does not need go first.

use std::collections::BTreeMap;

use super::block::{BlockBuf, BlockError, Shape};

/// A block of a flow.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockKey {
    pub flow_id: u32,
    pub block_num: u32,
}

#[derive(Clone, Debug)]
struct Entry {
    block: BlockBuf,
    /// When the block was first cached (for eviction, oldest first).
    born: u64,
}

/// Counters of a cache.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheCounters {
    pub frames_stored: u64,
    pub frames_overheard: u64,
    pub duplicates: u64,
    /// Frames that did not fit their block (beyond it, too long).
    pub refused: u64,
    pub blocks_evicted: u64,
}

/// Blocks by flow and number.
#[derive(Clone, Debug)]
pub struct FrameCache {
    blocks: BTreeMap<BlockKey, Entry>,
    capacity: usize,
    bytes: usize,
    births: u64,
    pub counters: CacheCounters,
}

impl FrameCache {
    /// A cache of at most `capacity` bytes of frames.
    pub fn new(capacity: usize) -> FrameCache {
        FrameCache {
            blocks: BTreeMap::new(),
            capacity,
            bytes: 0,
            births: 0,
            counters: CacheCounters::default(),
        }
    }

    /// Bytes of frames held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn block(&self, key: BlockKey) -> Option<&BlockBuf> {
        self.blocks.get(&key).map(|e| &e.block)
    }

    pub fn contains(&self, key: BlockKey) -> bool {
        self.blocks.contains_key(&key)
    }

    fn entry(&mut self, key: BlockKey) -> &mut Entry {
        let births = &mut self.births;
        self.blocks.entry(key).or_insert_with(|| {
            *births += 1;
            Entry {
                block: BlockBuf::new(),
                born: *births,
            }
        })
    }

    /// Block numbers of a flow held (whole or in part), in order.
    pub fn blocks_of(&self, flow_id: u32) -> Vec<u32> {
        let from = BlockKey {
            flow_id,
            block_num: 0,
        };
        self.blocks
            .range(from..)
            .take_while(|(k, _)| k.flow_id == flow_id)
            .map(|(k, _)| k.block_num)
            .collect()
    }

    /// Puts a whole block in (the source's own, or a micro-block).
    pub fn put(&mut self, key: BlockKey, block: BlockBuf) {
        self.remove(key);
        self.bytes += block.bytes();
        self.entry(key).block = block;
    }

    /// Stores a received (or, if `overheard`, an overheard) frame; true if
    /// it is new here.
    pub fn insert_frame(&mut self, key: BlockKey, i: u16, payload: &[u8], overheard: bool) -> bool {
        match self.entry(key).block.insert(i, payload) {
            Ok(true) => {
                self.bytes += payload.len();
                if overheard {
                    self.counters.frames_overheard += 1;
                } else {
                    self.counters.frames_stored += 1;
                }
                true
            }
            Ok(false) => {
                self.counters.duplicates += 1;
                false
            }
            Err(_) => {
                self.counters.refused += 1;
                false
            }
        }
    }

    /// Learns a block's shape from a BSYN.
    pub fn set_shape(&mut self, key: BlockKey, shape: Shape) -> Result<(), BlockError> {
        self.entry(key).block.set_shape(shape)
    }

    /// Forgets a block.
    pub fn remove(&mut self, key: BlockKey) -> Option<BlockBuf> {
        let e = self.blocks.remove(&key)?;
        self.bytes -= e.block.bytes();
        Some(e.block)
    }

    /// Forgets every block of a flow (FIN).
    pub fn remove_flow(&mut self, flow_id: u32) {
        let keys: Vec<BlockKey> = self
            .blocks
            .keys()
            .filter(|k| k.flow_id == flow_id)
            .copied()
            .collect();
        for k in keys {
            self.remove(k);
        }
    }

    /// Evicts the oldest blocks for which `needed` is false until the cache
    /// fits its capacity (blocks the node still needs are never evicted, so
    /// it may stay above capacity).
    pub fn evict(&mut self, needed: impl Fn(BlockKey) -> bool) {
        while self.bytes > self.capacity {
            let victim = self
                .blocks
                .iter()
                .filter(|(k, _)| !needed(**k))
                .min_by_key(|(_, e)| e.born)
                .map(|(k, _)| *k);
            let Some(k) = victim else { return };
            self.remove(k);
            self.counters.blocks_evicted += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u32) -> BlockKey {
        BlockKey {
            flow_id: 9,
            block_num: b,
        }
    }

    #[test]
    fn frames_received_and_overheard_are_kept_and_counted() {
        let mut c = FrameCache::new(1 << 20);
        assert!(c.insert_frame(key(0), 0, b"abc", false));
        assert!(c.insert_frame(key(0), 1, b"de", true));
        assert!(!c.insert_frame(key(0), 1, b"de", false));
        assert_eq!(c.bytes(), 5);
        c.set_shape(
            key(0),
            Shape {
                frames: 2,
                block_len: 5,
            },
        )
        .unwrap();
        assert_eq!(c.block(key(0)).unwrap().assemble().unwrap(), b"abcde");
        assert!(!c.insert_frame(key(0), 2, b"x", false));
        assert_eq!(
            c.counters,
            CacheCounters {
                frames_stored: 1,
                frames_overheard: 1,
                duplicates: 1,
                refused: 1,
                blocks_evicted: 0
            }
        );
    }

    #[test]
    fn eviction_takes_the_oldest_unneeded_blocks() {
        let mut c = FrameCache::new(10);
        for b in 0..4 {
            c.put(key(b), BlockBuf::from_data(&[b as u8; 4], 4));
        }
        assert_eq!(c.bytes(), 16);
        c.evict(|k| k.block_num == 0);
        assert!(c.contains(key(0)) && !c.contains(key(1)) && !c.contains(key(2)));
        assert!(c.contains(key(3)));
        assert_eq!(c.bytes(), 8);
        assert_eq!(c.counters.blocks_evicted, 2);
        c.remove_flow(9);
        assert_eq!(c.bytes(), 0);
    }
}
