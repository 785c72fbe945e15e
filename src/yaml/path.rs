//! Paths from a document's root to a node: `spec.template.spec.containers[0]`.

/// One step of a path from a document's root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

pub(crate) type Path = Vec<Seg>;

/// A mapping key step.
pub(crate) fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

/// `path` followed by the mapping key `k`.
pub(crate) fn child(path: &[Seg], k: &str) -> Path {
    let mut p = Vec::with_capacity(path.len() + 1);
    p.extend_from_slice(path);
    p.push(key(k));
    p
}

/// Renders a path as `spec.template.spec.containers[0].command`.
pub(crate) fn path_string(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_keys_and_indexes() {
        let p = child(&[key("spec"), key("containers"), Seg::Index(0)], "command");
        assert_eq!(path_string(&p), "spec.containers[0].command");
        assert_eq!(path_string(&[]), "");
    }
}
