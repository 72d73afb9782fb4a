//! A bounded least-recently-used packet cache (paper §4).
//!
//! iJTP keeps the data packets that cross a node so that a SNACK can be
//! answered close to the destination. When the cache is full the packet
//! evicted is the least recently *manipulated* one — inserted or looked up
//! for a retransmission (the paper: packets not recently requested are
//! unlikely to be requested again). The cache is per node, shared by the
//! flows crossing it; keys say which flow and packet.

use std::collections::BTreeMap;

/// The paper's default cache size, in packets (Table 1).
pub const DEFAULT_CAPACITY: usize = 1000;

/// At most `capacity` values by key, evicting the least recently used.
#[derive(Clone, Debug)]
pub struct LruCache<K: Ord + Copy, V> {
    capacity: usize,
    /// Monotonic use counter: the last use of each entry.
    clock: u64,
    entries: BTreeMap<K, (u64, V)>,
    /// Entries by last use, oldest first.
    by_use: BTreeMap<u64, K>,
}

impl<K: Ord + Copy, V> LruCache<K, V> {
    pub fn new(capacity: usize) -> LruCache<K, V> {
        LruCache {
            capacity,
            clock: 0,
            entries: BTreeMap::new(),
            by_use: BTreeMap::new(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Stores `value` under `key` as the most recently used entry, replacing
    /// any value already there. Returns the entry evicted to make room (with
    /// capacity 0, the new entry itself).
    pub fn insert(&mut self, key: K, value: V) -> Option<(K, V)> {
        if self.capacity == 0 {
            return Some((key, value));
        }
        let t = self.tick();
        if let Some((old, _)) = self.entries.insert(key, (t, value)) {
            self.by_use.remove(&old);
            self.by_use.insert(t, key);
            return None;
        }
        self.by_use.insert(t, key);
        if self.entries.len() > self.capacity {
            let (_, oldest) = self.by_use.pop_first()?;
            let (_, v) = self.entries.remove(&oldest)?;
            return Some((oldest, v));
        }
        None
    }

    /// The value under `key`, marking it most recently used.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let t = self.tick();
        let (used, _) = self.entries.get(key)?;
        let old = *used;
        self.by_use.remove(&old);
        self.by_use.insert(t, *key);
        let entry = self.entries.get_mut(key)?;
        entry.0 = t;
        Some(&entry.1)
    }

    /// The value under `key` without changing its place.
    pub fn peek(&self, key: &K) -> Option<&V> {
        self.entries.get(key).map(|(_, v)| v)
    }

    pub fn contains(&self, key: &K) -> bool {
        self.entries.contains_key(key)
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let (used, v) = self.entries.remove(key)?;
        self.by_use.remove(&used);
        Some(v)
    }

    /// Drops every entry whose key fails `keep` (a flow's acknowledged
    /// packets, say).
    pub fn retain(&mut self, mut keep: impl FnMut(&K) -> bool) {
        let gone: Vec<K> = self.entries.keys().filter(|k| !keep(k)).copied().collect();
        for k in gone {
            self.remove(&k);
        }
    }

    /// Keys from least to most recently used.
    pub fn keys_by_use(&self) -> impl Iterator<Item = &K> {
        self.by_use.values()
    }
}

impl<K: Ord + Copy, V> Default for LruCache<K, V> {
    fn default() -> Self {
        LruCache::new(DEFAULT_CAPACITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used() {
        let mut c = LruCache::new(3);
        assert_eq!(c.insert(1, "a"), None);
        assert_eq!(c.insert(2, "b"), None);
        assert_eq!(c.insert(3, "c"), None);
        // Looking 1 up (a SNACK hit) makes 2 the oldest.
        assert_eq!(c.get(&1), Some(&"a"));
        assert_eq!(c.insert(4, "d"), Some((2, "b")));
        assert_eq!(c.keys_by_use().copied().collect::<Vec<_>>(), [3, 1, 4]);
        // Peeking does not count as a use.
        assert_eq!(c.peek(&3), Some(&"c"));
        assert_eq!(c.insert(5, "e"), Some((3, "c")));
        // Replacing a value refreshes it without evicting.
        assert_eq!(c.insert(1, "A"), None);
        assert_eq!(c.insert(6, "f"), Some((4, "d")));
        assert_eq!(c.peek(&1), Some(&"A"));
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn the_default_holds_a_thousand_packets_and_no_more() {
        let mut c: LruCache<(u16, u32), Vec<u8>> = LruCache::default();
        assert_eq!(c.capacity(), 1000);
        let mut evicted = Vec::new();
        for seq in 0..1500u32 {
            if let Some((k, _)) = c.insert((1, seq), vec![0; 8]) {
                evicted.push(k.1);
            }
            assert!(c.len() <= 1000);
        }
        assert_eq!(c.len(), 1000);
        assert_eq!(evicted, (0..500).collect::<Vec<u32>>());
        assert!(!c.contains(&(1, 499)) && c.contains(&(1, 500)));
    }

    #[test]
    fn remove_retain_and_zero_capacity() {
        let mut c = LruCache::new(10);
        for k in 0..10 {
            c.insert(k, k * 10);
        }
        assert_eq!(c.remove(&3), Some(30));
        assert_eq!(c.remove(&3), None);
        c.retain(|k| *k >= 5);
        assert_eq!(
            c.keys_by_use().copied().collect::<Vec<_>>(),
            [5, 6, 7, 8, 9]
        );
        // After removals, eviction still takes the oldest left.
        for k in 10..15 {
            assert_eq!(c.insert(k, 0), None);
        }
        assert_eq!(c.insert(15, 0), Some((5, 50)));
        let mut none = LruCache::new(0);
        assert_eq!(none.insert(1, 1), Some((1, 1)));
        assert!(none.is_empty());
    }
}
