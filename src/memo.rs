//! The last few results of a costly function, kept per thread: a run meets the same few
//! inputs (an annotation meshjob renders, a wrapper script it wrote, the settings every pod
//! of a run shares) in pod after pod.

/// The results for the last `N` keys asked about, oldest first.
pub(crate) struct Recent<K, V, const N: usize> {
    seen: Vec<(K, V)>,
}

impl<K, V, const N: usize> Recent<K, V, N> {
    pub(crate) const fn new() -> Self {
        Recent { seen: Vec::new() }
    }

    /// The result kept for the key that `is` accepts, else the key and result that `make`
    /// gives, then kept. `is` must accept only a key whose result is the one asked for: the
    /// key holds everything the result depends on.
    pub(crate) fn find_or(&mut self, is: impl Fn(&K) -> bool, make: impl FnOnce() -> (K, V)) -> &V {
        let i = match self.seen.iter().position(|(k, _)| is(k)) {
            Some(i) => i,
            None => {
                if self.seen.len() == N {
                    self.seen.remove(0);
                }
                self.seen.push(make());
                self.seen.len() - 1
            }
        };
        &self.seen[i].1
    }
}

impl<V: Clone, const N: usize> Recent<String, V, N> {
    /// The result for `text`: the one kept, or `f(text)`, then kept.
    pub(crate) fn get(&mut self, text: &str, f: impl FnOnce(&str) -> V) -> V {
        self.find_or(|t| t == text, || (text.to_string(), f(text)))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn keeps_the_last_n_texts() {
        let calls = std::cell::Cell::new(0);
        let mut r: Recent<String, usize, 2> = Recent::new();
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

    #[test]
    fn keys_of_any_type() {
        let mut r: Recent<(u8, String), String, 2> = Recent::new();
        let mut get = |n: u8, t: &str| {
            r.find_or(
                |(m, u)| *m == n && u == t,
                || ((n, t.to_string()), format!("{n}{t}")),
            )
            .clone()
        };
        assert_eq!(get(1, "a"), "1a");
        assert_eq!(get(2, "a"), "2a");
        assert_eq!(get(1, "a"), "1a");
    }
}
