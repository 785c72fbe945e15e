//! The last few results of a costly function of a text, kept per thread: a run meets the
//! same few texts (an annotation meshjob renders, a wrapper script it wrote) in pod after
//! pod.

/// The results for the last `N` texts asked about, oldest first.
pub(crate) struct Recent<V, const N: usize> {
    seen: Vec<(String, V)>,
}

impl<V: Clone, const N: usize> Recent<V, N> {
    pub(crate) const fn new() -> Self {
        Recent { seen: Vec::new() }
    }

    /// The result for `text`: the one kept, or `f(text)`, then kept.
    pub(crate) fn get(&mut self, text: &str, f: impl FnOnce(&str) -> V) -> V {
        if let Some((_, v)) = self.seen.iter().find(|(t, _)| t == text) {
            return v.clone();
        }
        let value = f(text);
        if self.seen.len() == N {
            self.seen.remove(0);
        }
        self.seen.push((text.to_string(), value.clone()));
        value
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn keeps_the_last_n_texts() {
        let calls = std::cell::Cell::new(0);
        let mut r: Recent<usize, 2> = Recent::new();
        let mut len = |t: &str| {
            r.get(t, |t| {
                calls.set(calls.get() + 1);
                t.len()
            })
        };
        assert_eq!(len("a"), 1);
        assert_eq!(len("bb"), 2);
        assert_eq!(len("a"), 1);
        assert_eq!(len("ccc"), 3); // "a" goes
        assert_eq!(len("a"), 1);
        assert_eq!(calls.get(), 4);
    }
}
