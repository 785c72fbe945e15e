//! What a wrapped container looks like: the shared peers volume, how a container is (or
//! will be) wrapped, and how meshjob recognises its own wrapper. Shared by the wrapper's
//! planner (`container`), the revert (`revert`) and the look at hand-written fixes
//! (`own_fixes`).

use super::script::{self, ARG0, SHELL};
use crate::yaml::emit::{Out, literal_ok};
use crate::yaml::tree::{Entry, Kind, Node};
use crate::yaml::value::Value;
use granit_parser::ScalarStyle;

/// The shared volume through which several wrappers agree on who finished last.
pub(crate) const PEERS_VOLUME: &str = "meshjob";
pub(crate) const PEERS_MOUNT: &str = "/var/run/meshjob";

pub(crate) enum How<'d> {
    /// Already wrapped: only the script may need an update.
    Existing { cmd: &'d Node },
    /// `command` written out. `args` is the `args` entry, if there is one (it may be null).
    Command {
        cmd: &'d Entry,
        args: Option<&'d Entry>,
    },
    /// No `command` (none, null or `[]`: Kubernetes then runs the image's ENTRYPOINT), but
    /// the config maps the image to its entrypoint. `cmd` and `args` are the entries that
    /// are there.
    Entrypoint {
        argv: Vec<String>,
        cmd: Option<&'d Entry>,
        args: Option<&'d Entry>,
    },
}

pub(crate) struct Wrap<'d> {
    pub node: &'d Node,
    pub index: usize,
    pub name: String,
    pub how: How<'d>,
}

/// Whether a command sequence is a wrapper written by meshjob (any version).
pub(crate) fn wrapper_script(cmd: &Node) -> Option<&str> {
    let items = cmd.items()?;
    match items {
        [sh, c, s, zero]
            if sh.as_str() == Some(SHELL)
                && c.as_str() == Some("-c")
                && zero.as_str() == Some(ARG0) =>
        {
            let s = s.as_str()?;
            script::marker_version(s).map(|_| s)
        }
        _ => None,
    }
}

/// An argv word copied from the source: its exact text when it is a one-line scalar.
pub(crate) fn item_out(src: &str, n: &Node, from_flow: bool) -> Out {
    let Kind::Scalar { value, style } = &n.kind else {
        return Out::Str(String::new());
    };
    if !n.is_multiline(src) && n.tag.is_none() && !n.is_block_scalar() {
        let plain_flow_ok = from_flow || !value.contains([',', '[', ']', '{', '}']);
        return Out::Raw {
            text: src[n.props_start..n.end].to_string(),
            value: Value::from_node(n),
            flow_safe: *style != ScalarStyle::Plain || plain_flow_ok,
        };
    }
    if value.contains('\n') && literal_ok(value) {
        Out::Literal(value.as_str().into())
    } else {
        Out::Str(value.to_string())
    }
}
