//! A cancellation flag that long-running pure work polls (invariant 2).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cheap, clonable cancellation flag. Analyses poll [`Cancel::is_cancelled`] in their loops
/// and return partial results when it is set. A [`Cancel::child`] is cancelled with its parent
/// (the server's shutdown flag) or on its own (a superseded document version).
#[derive(Debug, Clone)]
pub struct Cancel {
    /// This flag first, then its ancestors'.
    flags: Arc<[Arc<AtomicBool>]>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel {
            flags: Arc::from(vec![Arc::new(AtomicBool::new(false))]),
        }
    }
}

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// A flag that is never set (for callers that cannot cancel).
    pub fn never() -> Self {
        Self::default()
    }

    /// A new flag that is also set whenever this one (or any of its ancestors) is.
    pub fn child(&self) -> Cancel {
        let mut flags = Vec::with_capacity(self.flags.len() + 1);
        flags.push(Arc::new(AtomicBool::new(false)));
        flags.extend(self.flags.iter().cloned());
        Cancel {
            flags: Arc::from(flags),
        }
    }

    /// Sets this flag (and so its children's), not its parent's.
    pub fn cancel(&self) {
        self.flags[0].store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.flags.iter().any(|f| f.load(Ordering::Relaxed))
    }

    /// True when both are the same flag (clones of one another).
    pub fn same_as(&self, other: &Cancel) -> bool {
        Arc::ptr_eq(&self.flags[0], &other.flags[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_follows_its_parent_but_not_the_other_way() {
        let parent = Cancel::new();
        let a = parent.child();
        let b = parent.child();
        let grandchild = a.child();
        a.cancel();
        assert!(a.is_cancelled() && grandchild.is_cancelled());
        assert!(!b.is_cancelled() && !parent.is_cancelled());
        parent.cancel();
        assert!(b.is_cancelled());
        assert!(a.same_as(&a.clone()) && !a.same_as(&b));
    }
}
