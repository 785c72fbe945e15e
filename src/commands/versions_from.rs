//! Paths read for versions only (`--versions-from`, the config's `versionsFrom`): walked as
//! the inputs are, read by the same first pass, never edited and never reported on.

use crate::manifest_versions::Versions;
use crate::paths::Spelling;
use crate::source::{self, Origin};
use crate::stream;
use std::path::Path;
use std::sync::Arc;

/// What `paths` say about versions. A relative path is taken from `base` (the config file's
/// directory), else from the working directory; files are named in places as the run names
/// its inputs. A path that cannot be read, or `-`, is an error that names it.
pub(crate) fn read(
    paths: &[String],
    base: Option<&Path>,
    spelling: &Spelling,
    what: &str,
) -> Result<Versions, String> {
    if paths.iter().any(|p| p == "-") {
        return Err(format!(
            "{what}: `-` (stdin) cannot be read for versions; give a file or directory"
        ));
    }
    let args: Vec<String> = (paths.iter())
        .map(|p| match base {
            Some(b) => b.join(p).to_string_lossy().into_owned(),
            None => p.clone(),
        })
        .collect();
    let e = source::expand(&args, spelling, None, &mut |_, _| None);
    if let Some((name, m)) = e.errors.first() {
        return Err(format!("{what}: {name}: {m}"));
    }
    if let Some(empty) = e.empty.first().filter(|e| e.already.is_empty()) {
        return Err(format!(
            "{what}: no YAML files (*.yaml, *.yml) found under `{}`",
            empty.name
        ));
    }
    let mut versions = Versions::default();
    for input in &e.inputs {
        let Origin::File(_) = &input.origin else {
            continue;
        };
        check(input).map_err(|m| format!("{what}: {m}"))?;
        let reader =
            source::open(&input.origin).map_err(|m| format!("{what}: {}: {m}", input.name))?;
        let name: Arc<str> = input.name.as_str().into();
        let ctx = stream::first_pass(stream::Reader::new(reader), Some(name));
        versions.extend(ctx.versions);
    }
    Ok(versions)
}

/// Whether a file read for versions is what the first pass can read: UTF-8 text (a UTF-16 or
/// UTF-32 file is named as such, with the conversion `check` gives) whose every document
/// parses. The first pass reads only the documents that may say something and passes over
/// what it cannot read, so a file it could not read would say nothing: the versions it
/// holds would be taken as unknown without a word. The error starts with `FILE:LINE:COL: `.
fn check(input: &source::Input) -> Result<(), String> {
    let name = &input.name;
    let opened = source::open(&input.origin).map_err(|m| format!("{name}: {m}"))?;
    let mut reader = stream::Reader::new(opened);
    while let Some(b) = reader.next_batch() {
        let b = b.map_err(|e| match e {
            stream::ReadError::Io(e) => format!("{name}: {}", source::cannot_read(&e)),
            stream::ReadError::TooBig { line, .. } => format!(
                "{name}:{}:1: a document larger than {} MiB",
                line + 1,
                stream::MAX_DOCUMENT_BYTES >> 20
            ),
        })?;
        let at = |off: usize| {
            let (l, c) = stream::line_col(b.line, &b.bytes, off);
            format!("{name}:{l}:{c}")
        };
        let text = source::decode_part(&b.bytes, b.offset)
            .map_err(|(off, m)| format!("{}: {m}", at(off)))?;
        for r in &b.pieces {
            crate::yaml::tree::parse_stream(&text[r.clone()]).map_err(|e| {
                let off = r.start + e.offset.min(r.len());
                format!("{}: invalid YAML: {}", at(off), e.message)
            })?;
        }
    }
    Ok(())
}
