//! Sparse bit sets of object ids: points-to sets as sorted `(block, word)` pairs, so that
//! unions and differences work 64 objects at a time and a set costs memory in proportion to
//! the blocks it touches. No indexing that could panic.

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Bits {
    /// Sorted by block number; no zero words.
    blocks: Vec<(u32, u64)>,
}

fn split(o: u32) -> (u32, u64) {
    (o >> 6, 1u64 << (o & 63))
}

impl Bits {
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Number of machine words (the unit of work of a union).
    pub fn words(&self) -> usize {
        self.blocks.len()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.blocks
            .iter()
            .map(|&(_, w)| w.count_ones() as usize)
            .sum()
    }

    /// Adds `o`; true when it was not there.
    pub fn insert(&mut self, o: u32) -> bool {
        let (b, bit) = split(o);
        match self.blocks.binary_search_by_key(&b, |&(k, _)| k) {
            Ok(i) => match self.blocks.get_mut(i) {
                Some((_, w)) if *w & bit == 0 => {
                    *w |= bit;
                    true
                }
                _ => false,
            },
            Err(i) => {
                self.blocks.insert(i, (b, bit));
                true
            }
        }
    }

    /// `self |= other`; true when `self` grew.
    pub fn union_with(&mut self, other: &Bits) -> bool {
        if other.blocks.is_empty() {
            return false;
        }
        if self.blocks.is_empty() {
            self.blocks = other.blocks.clone();
            return true;
        }
        let mut changed = false;
        let mut missing = false;
        let mut i = 0;
        for &(b, w) in &other.blocks {
            while self.blocks.get(i).is_some_and(|&(k, _)| k < b) {
                i += 1;
            }
            match self.blocks.get_mut(i) {
                Some((k, mine)) if *k == b => {
                    if w & !*mine != 0 {
                        *mine |= w;
                        changed = true;
                    }
                }
                _ => missing = true,
            }
        }
        if !missing {
            return changed;
        }
        // Some blocks are new: merge the two sorted lists.
        let mut merged = Vec::with_capacity(self.blocks.len() + other.blocks.len());
        let (mut a, mut b) = (
            self.blocks.iter().peekable(),
            other.blocks.iter().peekable(),
        );
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&(ka, wa)), Some(&&(kb, wb))) => {
                    if ka < kb {
                        merged.push((ka, wa));
                        a.next();
                    } else if kb < ka {
                        merged.push((kb, wb));
                        b.next();
                    } else {
                        merged.push((ka, wa | wb));
                        a.next();
                        b.next();
                    }
                }
                (Some(&&x), None) => {
                    merged.push(x);
                    a.next();
                }
                (None, Some(&&y)) => {
                    merged.push(y);
                    b.next();
                }
                (None, None) => break,
            }
        }
        self.blocks = merged;
        true
    }

    /// `self \ other`.
    pub fn difference(&self, other: &Bits) -> Bits {
        let mut out = Vec::new();
        let mut j = 0;
        for &(b, w) in &self.blocks {
            while other.blocks.get(j).is_some_and(|&(k, _)| k < b) {
                j += 1;
            }
            let theirs = match other.blocks.get(j) {
                Some(&(k, x)) if k == b => x,
                _ => 0,
            };
            let rest = w & !theirs;
            if rest != 0 {
                out.push((b, rest));
            }
        }
        Bits { blocks: out }
    }

    /// The ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().flat_map(|&(b, w)| {
            let base = b << 6;
            let mut rest = w;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                Some(base | bit)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn of(items: &[u32]) -> Bits {
        let mut b = Bits::default();
        for &i in items {
            b.insert(i);
        }
        b
    }

    #[test]
    fn behaves_like_a_sorted_set() {
        // A fixed pseudo-random sequence (LCG, seed 7) checked against BTreeSet.
        let mut x: u64 = 7;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % 700) as u32
        };
        for _ in 0..50 {
            let a: Vec<u32> = (0..40).map(|_| next()).collect();
            let b: Vec<u32> = (0..40).map(|_| next()).collect();
            let (sa, sb): (BTreeSet<u32>, BTreeSet<u32>) =
                (a.iter().copied().collect(), b.iter().copied().collect());
            let (mut ba, bb) = (of(&a), of(&b));
            assert_eq!(
                ba.iter().collect::<Vec<_>>(),
                sa.iter().copied().collect::<Vec<_>>()
            );
            assert_eq!(ba.len(), sa.len());
            let diff: Vec<u32> = ba.difference(&bb).iter().collect();
            assert_eq!(diff, sa.difference(&sb).copied().collect::<Vec<_>>());
            let grew = ba.union_with(&bb);
            assert_eq!(grew, !sb.is_subset(&sa));
            assert_eq!(
                ba.iter().collect::<Vec<_>>(),
                sa.union(&sb).copied().collect::<Vec<_>>()
            );
            assert!(!ba.union_with(&bb));
        }
    }

    #[test]
    fn extremes() {
        let mut b = of(&[0, 63, 64, u32::MAX]);
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![0, 63, 64, u32::MAX]);
        assert!(!b.insert(63));
        assert_eq!(b.words(), 3);
        assert!(b.difference(&b.clone()).is_empty());
    }
}
