//! Bit sets of object ids for points-to sets, 64 objects per word. A set starts sparse
//! (sorted `(block, word)` pairs, memory in proportion to the blocks it touches) and turns
//! dense (one word per block up to its highest) once it touches at least a quarter of the
//! blocks below its highest; a dense set that would grow past that ratio (a late, high id)
//! goes back to sparse. So a dense set costs about twice the sparse memory at most, and a
//! scan of it (differences, unions from it) at most four words per non-zero word, the unit
//! the solver counts work in. Unions into a dense set cost one word operation per word moved,
//! however large the set. No indexing that could panic.

#[derive(Debug, Clone)]
enum Repr {
    /// Sorted by block number; no zero words.
    Sparse(Vec<(u32, u64)>),
    /// Word `i` is block `i`; `nonzero` counts the words that are not zero.
    Dense { words: Vec<u64>, nonzero: usize },
}

/// No `PartialEq`: one set has two representations; compare `iter()`s.
#[derive(Debug, Clone)]
pub(crate) struct Bits {
    repr: Repr,
}

impl Default for Bits {
    fn default() -> Self {
        Bits {
            repr: Repr::Sparse(Vec::new()),
        }
    }
}

fn split(o: u32) -> (u32, u64) {
    (o >> 6, 1u64 << (o & 63))
}

/// Looks up the words of a set by ascending block number (a cursor over a sparse set, direct
/// access into a dense one).
struct Cursor<'a> {
    bits: &'a Bits,
    at: usize,
}

impl Cursor<'_> {
    fn word(&mut self, b: u32) -> u64 {
        match &self.bits.repr {
            Repr::Dense { words, .. } => words.get(b as usize).copied().unwrap_or(0),
            Repr::Sparse(blocks) => {
                while blocks.get(self.at).is_some_and(|&(k, _)| k < b) {
                    self.at += 1;
                }
                match blocks.get(self.at) {
                    Some(&(k, w)) if k == b => w,
                    _ => 0,
                }
            }
        }
    }
}

/// The union of up to two sets, looked up by ascending block number.
struct Mask<'a> {
    a: Option<Cursor<'a>>,
    b: Option<Cursor<'a>>,
}

impl<'a> Mask<'a> {
    fn new(a: Option<&'a Bits>, b: Option<&'a Bits>) -> Mask<'a> {
        Mask {
            a: a.map(Bits::cursor),
            b: b.map(Bits::cursor),
        }
    }

    fn word(&mut self, block: u32) -> u64 {
        self.a.as_mut().map_or(0, |c| c.word(block)) | self.b.as_mut().map_or(0, |c| c.word(block))
    }
}

impl Bits {
    pub fn is_empty(&self) -> bool {
        match &self.repr {
            Repr::Sparse(blocks) => blocks.is_empty(),
            Repr::Dense { nonzero, .. } => *nonzero == 0,
        }
    }

    /// Number of non-zero machine words (the unit of work of a union).
    pub fn words(&self) -> usize {
        match &self.repr {
            Repr::Sparse(blocks) => blocks.len(),
            Repr::Dense { nonzero, .. } => *nonzero,
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.blocks().map(|(_, w)| w.count_ones() as usize).sum()
    }

    #[cfg(test)]
    fn is_dense(&self) -> bool {
        matches!(self.repr, Repr::Dense { .. })
    }

    /// The non-zero words in ascending block order.
    fn blocks(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let (sparse, dense) = match &self.repr {
            Repr::Sparse(blocks) => (blocks.as_slice(), &[][..]),
            Repr::Dense { words, .. } => (&[][..], words.as_slice()),
        };
        sparse.iter().copied().chain(
            dense
                .iter()
                .enumerate()
                .filter(|&(_, &w)| w != 0)
                .map(|(i, &w)| (i as u32, w)),
        )
    }

    fn cursor(&self) -> Cursor<'_> {
        Cursor { bits: self, at: 0 }
    }

    /// True when `o` is in the set.
    pub fn contains(&self, o: u32) -> bool {
        let (b, bit) = split(o);
        self.cursor().word(b) & bit != 0
    }

    /// Adds `o`; true when it was not there.
    pub fn insert(&mut self, o: u32) -> bool {
        let (b, bit) = split(o);
        self.fit(b, 1);
        let added = match &mut self.repr {
            Repr::Dense { words, nonzero } => return dense_or(words, nonzero, b, bit),
            Repr::Sparse(blocks) => match blocks.binary_search_by_key(&b, |&(k, _)| k) {
                Ok(i) => match blocks.get_mut(i) {
                    Some((_, w)) if *w & bit == 0 => {
                        *w |= bit;
                        return true;
                    }
                    _ => return false,
                },
                Err(i) => {
                    blocks.insert(i, (b, bit));
                    true
                }
            },
        };
        self.maybe_densify();
        added
    }

    /// `self |= other`; true when `self` grew.
    pub fn union_with(&mut self, other: &Bits) -> bool {
        self.union_except(other, None)
    }

    /// `self |= other \ except` (`except` absent: nothing excluded); true when `self` grew.
    pub fn union_except(&mut self, other: &Bits, except: Option<&Bits>) -> bool {
        self.union_except_both(other, except, None)
    }

    /// `self |= other \ (x ∪ y)` (an absent set excludes nothing); true when `self` grew.
    pub fn union_except_both(&mut self, other: &Bits, x: Option<&Bits>, y: Option<&Bits>) -> bool {
        let mut mask = Mask::new(x, y);
        if let Some(top) = other.last_block() {
            self.fit(top, other.words());
        }
        let blocks = match &mut self.repr {
            Repr::Dense { words, nonzero } => {
                let mut changed = false;
                for (b, w) in other.blocks() {
                    let w = w & !mask.word(b);
                    if w != 0 {
                        changed |= dense_or(words, nonzero, b, w);
                    }
                }
                return changed;
            }
            Repr::Sparse(blocks) => blocks,
        };
        // First pass: words of blocks `self` has are or-ed in place; the others are counted.
        let mut changed = false;
        let mut missing = 0usize;
        let mut i = 0;
        for (b, w) in other.blocks() {
            let w = w & !mask.word(b);
            if w == 0 {
                continue;
            }
            while blocks.get(i).is_some_and(|&(k, _)| k < b) {
                i += 1;
            }
            match blocks.get_mut(i) {
                Some((k, mine)) if *k == b => {
                    if w & !*mine != 0 {
                        *mine |= w;
                        changed = true;
                    }
                }
                _ => missing += 1,
            }
        }
        if missing == 0 {
            return changed;
        }
        // Second pass: merge the missing blocks in (sorted).
        let mut merged = Vec::with_capacity(blocks.len() + missing);
        let mut mask = Mask::new(x, y);
        let mut mine = blocks.iter().copied().peekable();
        for (b, w) in other.blocks() {
            let w = w & !mask.word(b);
            if w == 0 {
                continue;
            }
            while let Some(&(k, x)) = mine.peek() {
                if k > b {
                    break;
                }
                merged.push((k, x));
                mine.next();
            }
            if merged.last().is_none_or(|&(k, _)| k != b) {
                merged.push((b, w));
            }
        }
        merged.extend(mine);
        *blocks = merged;
        self.maybe_densify();
        true
    }

    /// The highest non-zero block.
    fn last_block(&self) -> Option<u32> {
        match &self.repr {
            Repr::Sparse(blocks) => blocks.last().map(|&(k, _)| k),
            Repr::Dense { words, .. } => words.iter().rposition(|&w| w != 0).map(|i| i as u32),
        }
    }

    /// Before a dense set takes up to `adding` words reaching block `top`: if its word array
    /// would have to grow past four words per word it holds (a high id, such as an object
    /// created late), it goes back to the sparse form, so no set is ever dense over a range it
    /// barely touches.
    fn fit(&mut self, top: u32, adding: usize) {
        let Repr::Dense { words, nonzero } = &self.repr else {
            return;
        };
        let len = top as usize + 1;
        if len > words.len() && len > 4 * (*nonzero + adding) {
            self.repr = Repr::Sparse(self.blocks().collect());
        }
    }

    /// Switches a sparse set that touches at least a quarter of the blocks below its highest
    /// to the dense form.
    fn maybe_densify(&mut self) {
        let Repr::Sparse(blocks) = &self.repr else {
            return;
        };
        let Some(&(top, _)) = blocks.last() else {
            return;
        };
        if blocks.len() < 16 || (top as usize + 1) > 4 * blocks.len() {
            return;
        }
        let mut words = vec![0u64; top as usize + 1];
        for &(b, w) in blocks {
            if let Some(slot) = words.get_mut(b as usize) {
                *slot = w;
            }
        }
        let nonzero = blocks.len();
        self.repr = Repr::Dense { words, nonzero };
    }

    /// `self \ other`.
    #[cfg(test)]
    pub fn difference(&self, other: &Bits) -> Bits {
        let mut theirs = other.cursor();
        let blocks: Vec<(u32, u64)> = self
            .blocks()
            .filter_map(|(b, w)| {
                let rest = w & !theirs.word(b);
                (rest != 0).then_some((b, rest))
            })
            .collect();
        let mut out = Bits {
            repr: Repr::Sparse(blocks),
        };
        out.maybe_densify();
        out
    }

    /// The ids in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks().flat_map(|(b, w)| {
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

/// Ors `w` into block `b` of a dense set (grown as needed); true when a bit was added.
fn dense_or(words: &mut Vec<u64>, nonzero: &mut usize, b: u32, w: u64) -> bool {
    let i = b as usize;
    if i >= words.len() {
        words.resize(i + 1, 0);
    }
    match words.get_mut(i) {
        Some(slot) if w & !*slot != 0 => {
            if *slot == 0 {
                *nonzero += 1;
            }
            *slot |= w;
            true
        }
        _ => false,
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
            // Union except a mask, into a set of a different spread.
            let c: Vec<u32> = (0..25).map(|_| next() * 3).collect();
            let m: Vec<u32> = (0..60).map(|_| next()).collect();
            let (sc, sm): (BTreeSet<u32>, BTreeSet<u32>) =
                (c.iter().copied().collect(), m.iter().copied().collect());
            let mut bc = of(&c);
            let expected: BTreeSet<u32> = sc
                .union(&sb.difference(&sm).copied().collect())
                .copied()
                .collect();
            let grew = bc.union_except(&bb, Some(&of(&m)));
            assert_eq!(grew, expected.len() > sc.len());
            assert_eq!(
                bc.iter().collect::<Vec<_>>(),
                expected.into_iter().collect::<Vec<_>>()
            );
            assert!(!bc.union_except(&bb, Some(&of(&m))));
            // Union except two masks (the solver's delta: not refused, not propagated yet),
            // one of them dense.
            let n: Vec<u32> = (0..400).map(|_| next()).collect();
            let sn: BTreeSet<u32> = n.iter().copied().collect();
            let mut bd = of(&c);
            let expected: BTreeSet<u32> = sc.union(&(&(&sb - &sm) - &sn)).copied().collect();
            let grew = bd.union_except_both(&bb, Some(&of(&m)), Some(&of(&n)));
            assert_eq!(grew, expected.len() > sc.len());
            assert_eq!(bd.iter().collect::<BTreeSet<_>>(), expected);
            let mut be = of(&c);
            be.union_except_both(&bb, None, Some(&of(&n)));
            assert_eq!(
                be.iter().collect::<BTreeSet<_>>(),
                sc.union(&(&sb - &sn)).copied().collect::<BTreeSet<_>>()
            );
        }
    }

    #[test]
    fn dense_and_sparse_sets_agree() {
        let mut x: u64 = 11;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % m) as u32
        };
        for round in 0..40 {
            // Dense-sized sets (hundreds of objects over a few thousand ids) and small ones.
            let big: Vec<u32> = (0..600).map(|_| next(3000)).collect();
            let small: Vec<u32> = (0..10).map(|_| next(4000)).collect();
            let mask: Vec<u32> = (0..round * 30).map(|_| next(3500)).collect();
            let (sb, ss, sm): (BTreeSet<u32>, BTreeSet<u32>, BTreeSet<u32>) = (
                big.iter().copied().collect(),
                small.iter().copied().collect(),
                mask.iter().copied().collect(),
            );
            let (b, sm_bits, m) = (of(&big), of(&small), of(&mask));
            assert!(b.is_dense() && !sm_bits.is_dense());
            assert_eq!(b.len(), sb.len());
            // Sparse into dense, dense into sparse, with and without a (dense or sparse) mask.
            let mut into_dense = b.clone();
            into_dense.union_except(&sm_bits, Some(&m));
            let want: BTreeSet<u32> = sb.union(&(&ss - &sm)).copied().collect();
            assert_eq!(into_dense.iter().collect::<BTreeSet<_>>(), want);
            let mut into_sparse = sm_bits.clone();
            assert!(into_sparse.union_with(&b));
            assert!(into_sparse.is_dense());
            assert_eq!(into_sparse.iter().collect::<BTreeSet<_>>(), &sb | &ss);
            assert_eq!(
                into_sparse.words(),
                (&sb | &ss)
                    .iter()
                    .map(|o| o >> 6)
                    .collect::<BTreeSet<_>>()
                    .len()
            );
            let diff = into_sparse.difference(&b);
            assert_eq!(diff.iter().collect::<BTreeSet<_>>(), &ss - &sb);
            assert_eq!(b.difference(&m).iter().collect::<BTreeSet<_>>(), &sb - &sm);
            assert!(!into_sparse.union_with(&b) && !into_sparse.insert(big[0]));
        }
    }

    #[test]
    fn a_dense_set_reaching_a_far_id_goes_back_to_sparse() {
        let dense_part: Vec<u32> = (0..2_000).step_by(7).collect();
        let mut b = of(&dense_part);
        assert!(b.is_dense());
        // A high id (an object created late) would make the word array mostly zeros.
        assert!(b.insert(5_000_000));
        assert!(!b.is_dense());
        assert!(b.insert(u32::MAX));
        let mut c = of(&dense_part);
        assert!(c.union_with(&of(&[4_000_000, 4_000_001])));
        assert!(!c.is_dense());
        let mut want: Vec<u32> = dense_part.clone();
        want.extend([5_000_000, u32::MAX]);
        assert_eq!(b.iter().collect::<Vec<_>>(), want);
        assert_eq!(b.words(), 2_000 / 64 + 1 + 2);
        // A near id keeps it dense.
        let mut d = of(&dense_part);
        assert!(d.insert(2_100) && d.is_dense());
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
