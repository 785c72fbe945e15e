//! Property tests over generated Job/CronJob streams (a seeded generator, no extra crate).
//!
//! Each case varies indentation (2 or 4), flush or indented sequences, block or flow
//! collections, quoting, comments, CRLF, a BOM, extra documents of other kinds and opted-out
//! Jobs, with argv strings full of shell and YAML metacharacters. It asserts the shared
//! invariants (`common::invariants`: the output parses, the diff gives the output, a second
//! `fix` changes nothing) and, per case:
//! - every document that is not a target comes out byte-identical;
//! - every wrapped container's `args` is exactly its original `command ++ args`;
//! - taking the fix out again (`--strategy none`), straight from the wrapper or after a
//!   move to the native annotation, gives back the input byte for byte.
//!
//! `MESHJOB_PROPTEST_CASES` (default 400) and `MESHJOB_PROPTEST_SEED` choose the run; a
//! failure prints the seed and the generated text.

mod common;

use common::invariants;
use meshjob::{Node, parse_stream};
use meshjob::{ScalarType, Value, plain_type};
use meshjob::{Settings, StrategyChoice, Version};

/// SplitMix64: tiny, seedable, good enough to pick shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const FRAGMENTS: &[&str] = &[
    "",
    " ",
    "  ",
    "a",
    "word",
    "-c",
    "--flag=1",
    "-",
    "$",
    "$HOME",
    "$(VAR)",
    "${X:-y}",
    "'",
    "\"",
    "''",
    "\\",
    "\\n",
    "#",
    " #x",
    "# not a comment",
    ": ",
    "a: b",
    "key:",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a",
    "*a",
    "!tag",
    "|",
    ">",
    "%",
    "@",
    "`id`",
    "~",
    "null",
    "true",
    "no",
    "0",
    "1.5",
    "0x1F",
    "é",
    "日本語",
    "🙂",
    "\t",
    "\n",
    "a\nb",
    "\u{7f}",
    "\u{85}",
    "\u{feff}",
    "---",
    "...",
    "echo hi && exit 3",
    "print bpi(2000)",
    "/bin/sh",
    "=",
    "?",
    "? x",
    "-- -",
];

fn argv_string(rng: &mut Rng) -> String {
    let n = rng.below(4);
    (0..n).map(|_| *rng.pick(FRAGMENTS)).collect()
}

/// A plain scalar we are sure reads back as this string, in block (and, unless `flow`,
/// only block) context.
fn plain_ok(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !(first.is_ascii_alphanumeric() || first == '/' || first == '$') {
        return false;
    }
    if s.ends_with(' ') || s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    let extra: &[char] = if flow {
        &[]
    } else {
        &[' ', '(', ')', '{', '}']
    };
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_./=$-+@%".contains(c) || extra.contains(&c))
        && plain_type(s) == ScalarType::Str
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{85}' || c == '\u{feff}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn scalar(rng: &mut Rng, s: &str, flow: bool) -> String {
    let printable = !s
        .chars()
        .any(|c| c.is_control() || c == '\u{85}' || c == '\u{feff}');
    match rng.below(3) {
        0 if plain_ok(s, flow) => s.to_string(),
        1 if printable => format!("'{}'", s.replace('\'', "''")),
        _ => double_quoted(s),
    }
}

/// How one case is written.
struct Style {
    step: usize,
    flush: bool,
    comments: bool,
}

/// Builds block YAML line by line.
struct Out {
    text: String,
}

impl Out {
    fn line(&mut self, indent: usize, s: &str) {
        self.text.push_str(&" ".repeat(indent));
        self.text.push_str(s);
        self.text.push('\n');
    }
}

fn comment(rng: &mut Rng, st: &Style) -> &'static str {
    if st.comments && rng.chance(25) {
        const COMMENTS: [&str; 4] = ["  # note", " # a: b", " #", "\t# tab"];
        COMMENTS[rng.below(COMMENTS.len())]
    } else {
        ""
    }
}

fn own_line_comment(rng: &mut Rng, st: &Style, out: &mut Out, indent: usize) {
    if st.comments && rng.chance(15) {
        let c = *rng.pick(&["# comment", "#", "# - item: x", "# ---"]);
        out.line(indent, c);
    }
}

/// Writes `key: <sequence of strings>` at `indent`, block or flow. Returns whether it wrote
/// comments among the items.
fn seq(
    rng: &mut Rng,
    st: &Style,
    out: &mut Out,
    indent: usize,
    key: &str,
    items: &[String],
) -> bool {
    // Spaces after the `:` other than one, and trailing ones, are kept on every path.
    let spaces = *rng.pick(&[" ", " ", " ", "  ", "   "]);
    if rng.chance(40) || items.is_empty() {
        let parts: Vec<String> = items.iter().map(|s| scalar(rng, s, true)).collect();
        let sep = if rng.chance(50) { ", " } else { "," };
        let c = comment(rng, st);
        let c = if c.is_empty() {
            *rng.pick(&["", "", " "])
        } else {
            c
        };
        out.line(indent, &format!("{key}:{spaces}[{}]{c}", parts.join(sep)));
        return false;
    }
    let c = comment(rng, st);
    let c = if c.is_empty() {
        *rng.pick(&["", "", "", " ", "  "])
    } else {
        c
    };
    out.line(indent, &format!("{key}:{c}"));
    let at = if st.flush { indent } else { indent + st.step };
    let before = out.text.len();
    let mut commented = false;
    for s in items {
        own_line_comment(rng, st, out, at);
        let v = scalar(rng, s, false);
        let c = comment(rng, st);
        commented |= !c.is_empty();
        out.line(at, &format!("- {v}{c}"));
    }
    commented
        || out.text[before..]
            .lines()
            .any(|l| l.trim_start().starts_with('#'))
}

/// One generated container and the argv it must keep.
struct Container {
    command: Vec<String>,
    args: Option<Vec<String>>,
}

/// Writes one container; returns its argv, and whether it has an empty `args` or comments
/// among the items of its `command` (see `check_case`).
fn container(
    rng: &mut Rng,
    st: &Style,
    out: &mut Out,
    indent: usize,
    i: usize,
) -> (Vec<String>, bool) {
    let c = Container {
        command: (0..1 + rng.below(4)).map(|_| argv_string(rng)).collect(),
        args: rng
            .chance(50)
            .then(|| (0..rng.below(4)).map(|_| argv_string(rng)).collect()),
    };
    let dash = if st.flush { indent } else { indent + st.step };
    let mut commented = false;
    if rng.chance(20) {
        // The whole container as a flow mapping.
        let mut parts = vec![format!("name: c{i}"), "image: busybox".to_string()];
        let cmd: Vec<String> = c.command.iter().map(|s| scalar(rng, s, true)).collect();
        parts.push(format!("command: [{}]", cmd.join(", ")));
        if let Some(a) = &c.args {
            let a: Vec<String> = a.iter().map(|s| scalar(rng, s, true)).collect();
            parts.push(format!("args: [{}]", a.join(", ")));
        }
        out.line(dash, &format!("- {{{}}}", parts.join(", ")));
    } else {
        let inner = dash + 2;
        out.line(dash, &format!("- name: c{i}{}", comment(rng, st)));
        let image = scalar(rng, "busybox:1.36", false);
        out.line(inner, &format!("image: {image}"));
        own_line_comment(rng, st, out, inner);
        commented = seq(rng, st, out, inner, "command", &c.command);
        if let Some(a) = &c.args {
            seq(rng, st, out, inner, "args", a);
        }
    }
    let empty = commented || c.args.as_ref().is_some_and(Vec::is_empty);
    let mut argv = c.command;
    argv.extend(c.args.unwrap_or_default());
    (argv, empty)
}

/// A generated document: its text, and the argv of each container when it is a target.
struct GenDoc {
    text: String,
    /// A container has `args: []`, or comments among its `command` items (see
    /// `check_case`).
    lossy: bool,
    target: Option<Vec<Vec<String>>>,
}

fn job(rng: &mut Rng, st: &Style, n: usize) -> GenDoc {
    let s = st.step;
    let mut out = Out {
        text: String::new(),
    };
    let cron = rng.chance(40);
    let opted_out = rng.chance(10);
    own_line_comment(rng, st, &mut out, 0);
    let api = if cron {
        *rng.pick(&["batch/v1", "batch/v1beta1"])
    } else {
        "batch/v1"
    };
    let api = scalar(rng, api, false);
    out.line(0, &format!("apiVersion: {api}{}", comment(rng, st)));
    let kind = scalar(rng, if cron { "CronJob" } else { "Job" }, false);
    out.line(0, &format!("kind: {kind}"));
    out.line(0, "metadata:");
    out.line(s, &format!("name: docs-{n}{}", comment(rng, st)));
    out.line(0, "spec:");
    let mut at = s;
    if cron {
        out.line(at, "schedule: \"*/5 * * * *\"");
        out.line(at, "jobTemplate:");
        out.line(at + s, "spec:");
        at += 2 * s;
    }
    out.line(at, "template:");
    if opted_out || rng.chance(30) {
        out.line(at + s, "metadata:");
        out.line(at + 2 * s, "labels:");
        out.line(at + 3 * s, "app: gen");
        if opted_out {
            out.line(at + 3 * s, "sidecar.istio.io/inject: \"false\"");
        }
    }
    out.line(at + s, "spec:");
    let pod = at + 2 * s;
    out.line(pod, "restartPolicy: Never");
    own_line_comment(rng, st, &mut out, pod);
    out.line(pod, "containers:");
    let mut argvs = Vec::new();
    for i in 0..1 + rng.below(3) {
        own_line_comment(rng, st, &mut out, if st.flush { pod } else { pod + s });
        argvs.push(container(rng, st, &mut out, pod, i));
    }
    GenDoc {
        text: out.text,
        lossy: argvs.iter().any(|(_, empty)| *empty),
        target: (!opted_out).then(|| argvs.into_iter().map(|(a, _)| a).collect()),
    }
}

fn other_doc(rng: &mut Rng, st: &Style, n: usize) -> GenDoc {
    let s = st.step;
    let mut out = Out {
        text: String::new(),
    };
    match rng.below(3) {
        0 => {
            out.line(0, "apiVersion: v1");
            out.line(0, "kind: ConfigMap");
            out.line(0, "metadata:");
            out.line(s, &format!("name: cm-{n}"));
            out.line(0, "data:");
            let v = argv_string(rng);
            let v = scalar(rng, &v, false);
            out.line(s, &format!("script: {v}{}", comment(rng, st)));
        }
        1 => {
            // A look-alike: Volcano's Job has containers with commands too.
            out.line(0, "apiVersion: batch.volcano.sh/v1alpha1");
            out.line(0, "kind: Job");
            out.line(0, "metadata: {name: vc}");
            out.line(0, "spec:");
            out.line(s, "tasks:");
            out.line(s, "- template:");
            out.line(3 * s, "spec:");
            out.line(4 * s, "containers:");
            out.line(4 * s, "- {name: a, image: b, command: [sleep, \"1\"]}");
        }
        _ => {
            out.text.push_str("{apiVersion: v1, kind: Service, metadata: {name: svc}, spec: {ports: [{port: 80}]}}\n");
        }
    }
    GenDoc {
        text: out.text,
        lossy: false,
        target: None,
    }
}

fn stream(rng: &mut Rng) -> (String, Vec<GenDoc>) {
    let st = Style {
        step: *rng.pick(&[2, 4]),
        flush: rng.chance(50),
        comments: rng.chance(70),
    };
    let mut docs = Vec::new();
    for n in 0..1 + rng.below(4) {
        docs.push(if rng.chance(65) {
            job(rng, &st, n)
        } else {
            other_doc(rng, &st, n)
        });
    }
    let mut text = String::new();
    if rng.chance(10) {
        text.push('\u{feff}');
    }
    for (i, d) in docs.iter().enumerate() {
        if i > 0 || rng.chance(30) {
            text.push_str("---\n");
        }
        text.push_str(&d.text);
    }
    if rng.chance(15) {
        text.pop();
    }
    if rng.chance(25) {
        text = text.replace('\n', "\r\n");
    }
    (text, docs)
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::Seq(items) => items.iter().map(|i| i.as_str().map(String::from)).collect(),
        _ => None,
    }
}

fn containers(root: &Node) -> Vec<Value> {
    let v = Value::from_node(root);
    let spec = match v.get("kind").and_then(Value::as_str) {
        Some("CronJob") => v
            .get("spec")
            .and_then(|s| s.get("jobTemplate"))
            .and_then(|s| s.get("spec")),
        _ => v.get("spec"),
    };
    match spec
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("containers"))
    {
        Some(Value::Seq(c)) => c.clone(),
        _ => Vec::new(),
    }
}

fn check_case(text: &str, docs: &[GenDoc]) -> Result<(), String> {
    // The generator's own promise: the input reads back as generated.
    let before = parse_stream(text).map_err(|e| format!("generator bug: {}", e.message))?;
    if before.len() != docs.len() {
        return Err(format!("generator bug: {} documents", before.len()));
    }
    for (doc, g) in before.iter().zip(docs) {
        if let Some(argvs) = &g.target {
            let got: Vec<Vec<String>> = containers(&doc.root)
                .iter()
                .map(|c| {
                    let mut a = strings(c.get("command")).unwrap_or_default();
                    a.extend(strings(c.get("args")).unwrap_or_default());
                    a
                })
                .collect();
            if &got != argvs {
                return Err(format!("generator bug: argv {got:?} != {argvs:?}"));
            }
        }
    }
    let out = invariants::check(text)?;
    if let Some(f) = &out.fatal {
        return Err(format!("fatal: {} at {}", f.message, f.offset));
    }
    let after = parse_stream(&out.text).map_err(|e| e.message)?;
    if after.len() != docs.len() {
        return Err("document count changed".into());
    }
    for ((b, a), g) in before.iter().zip(&after).zip(docs) {
        match &g.target {
            None => {
                // A document's range begins where the one before it ends: the tail of that
                // line (spaces after its last node) is the document before's.
                fn content(text: &str, r: std::ops::Range<usize>) -> &str {
                    let t = &text[r];
                    match t.find('\n') {
                        Some(i) if !t[..i].trim_end_matches([' ', '\t', '\r']).is_empty() => t,
                        Some(i) => &t[i + 1..],
                        None => t,
                    }
                }
                if content(text, b.range.clone()) != content(&out.text, a.range.clone()) {
                    return Err("a document without targets was changed".into());
                }
            }
            Some(argvs) => {
                let cs = containers(&a.root);
                if cs.len() != argvs.len() {
                    return Err("container count changed".into());
                }
                for (c, want) in cs.iter().zip(argvs) {
                    let cmd = strings(c.get("command")).ok_or("command is not strings")?;
                    let ok = cmd.len() == 4
                        && cmd[0] == "/bin/sh"
                        && cmd[1] == "-c"
                        && cmd[3] == "meshjob";
                    if !ok {
                        return Err(format!("not wrapped: command {cmd:?}"));
                    }
                    let args = strings(c.get("args")).ok_or("args are not strings")?;
                    if &args != want {
                        return Err(format!("argv changed: {want:?} became {args:?}"));
                    }
                }
            }
        }
    }
    // Not yet given back byte for byte: an empty `args: []` beside `command` (the
    // wrapper's marker does not tell it from no `args`, and it comes back absent), and
    // comments among the items of a `command` (the wrapper drops them).
    if docs.iter().any(|d| d.lossy) {
        return Ok(());
    }
    round_trips(text, &out.text)
}

/// Taking the fix out gives back `input` byte for byte: from `fixed` (the wrapper) with
/// `--strategy none`, and after moving `fixed` to the native annotation (Istio 1.28,
/// Kubernetes 1.30), again with `none`.
fn round_trips(input: &str, fixed: &str) -> Result<(), String> {
    if fixed == input {
        return Ok(());
    }
    let none = Settings {
        strategy: StrategyChoice::None,
        ..Settings::default()
    };
    let native = Settings {
        istio_version: Some(Version::new(1, 28)),
        kubernetes_version: Some(Version::new(1, 30)),
        ..Settings::default()
    };
    let back = meshjob::edit_text(fixed, &none);
    if let Some(f) = &back.fatal {
        return Err(format!("none on the wrapped text is fatal: {}", f.message));
    }
    if back.text != input {
        let diff = meshjob::unified_diff("input.yaml", input, &back.text);
        return Err(format!("none did not give the input back:\n{diff}"));
    }
    let moved = meshjob::edit_text(fixed, &native);
    if let Some(f) = &moved.fatal {
        return Err(format!(
            "native on the wrapped text is fatal: {}",
            f.message
        ));
    }
    let direct = meshjob::edit_text(input, &native);
    if moved.text != direct.text {
        let diff = meshjob::unified_diff("input.yaml", &direct.text, &moved.text);
        return Err(format!("wrapper then native differs from native:\n{diff}"));
    }
    let back = meshjob::edit_text(&moved.text, &none);
    if back.text != input {
        let diff = meshjob::unified_diff("input.yaml", input, &back.text);
        return Err(format!(
            "native then none did not give the input back:\n{diff}"
        ));
    }
    Ok(())
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn generated_streams_keep_every_invariant() {
    let cases = env_u64("MESHJOB_PROPTEST_CASES").unwrap_or(400);
    let seed = env_u64("MESHJOB_PROPTEST_SEED").unwrap_or(0x006d_6573_686a_6f62);
    let mut wrapped = 0;
    for i in 0..cases {
        let case_seed = seed.wrapping_add(i);
        let mut rng = Rng(case_seed);
        let (text, docs) = stream(&mut rng);
        if let Err(e) = check_case(&text, &docs) {
            panic!(
                "case {i} failed (MESHJOB_PROPTEST_SEED={case_seed} MESHJOB_PROPTEST_CASES=1): \
                 {e}\n--- input ---\n{text}"
            );
        }
        wrapped += docs.iter().filter(|g| g.target.is_some()).count();
    }
    assert!(wrapped > 0, "the generator made no targets");
}
