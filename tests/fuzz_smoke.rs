//! A fuzzer that runs on the stable toolchain: seeded, YAML-aware mutations of the seed
//! corpus (`testdata/**/input.yaml`, `testdata/regressions/`, and `../shared/corpus` when it
//! is there) through the whole pipeline, asserting the shared invariants.
//!
//! `cargo fuzz` (libFuzzer, `fuzz/`) is the coverage-guided fuzzer; this one needs no nightly
//! features and is what `scripts/fuzz.sh` falls back to. It is `#[ignore]`d, so the default
//! `cargo test` does not run it:
//!
//! ```sh
//! MESHJOB_FUZZ_SECONDS=60 MESHJOB_FUZZ_SEED=7 cargo test --release --test fuzz_smoke -- --ignored
//! ```
//!
//! A failing input is written to `target/fuzz-smoke-crash.yaml`; copy it into
//! `testdata/regressions/` once fixed.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Tokens that keep a mutation YAML-ish (the same spirit as `fuzz/yaml.dict`).
const TOKENS: &[&str] = &[
    "---\n",
    "...\n",
    "- ",
    ": ",
    "? ",
    " # c",
    "&a ",
    "*a",
    "<<: *a",
    "!!str ",
    "!t ",
    "|\n",
    "|-\n",
    ">\n",
    "[",
    "]",
    "{",
    "}",
    ", ",
    "'",
    "\"",
    "\r\n",
    "\r",
    "\n  ",
    "\n    ",
    "\t",
    "\u{feff}",
    "\\",
    "kind: Job\n",
    "kind: CronJob\n",
    "apiVersion: batch/v1\n",
    "command: [a, b]\n",
    "args: []\n",
    "containers:\n- name: x\n  command: [y]\n",
    "sidecar.istio.io/inject: \"false\"\n",
    "proxy.istio.io/config: |\n  {}\n",
    "é",
    "🙂",
];

fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut stack = vec![root.join("testdata")];
    if let Some(shared) = common::shared_dir() {
        stack.push(shared.join("corpus"));
    }
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                paths.push(p);
            }
        }
    }
    paths.sort();
    paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(rng: &mut Rng, seeds: &[String], text: &mut String) {
    let at = char_floor(text, rng.below(text.len() + 1));
    match rng.below(8) {
        0 | 1 => text.insert_str(at, TOKENS[rng.below(TOKENS.len())]),
        2 => {
            let to = char_floor(text, at + rng.below(16));
            text.replace_range(at..to, "");
        }
        3 => {
            // Duplicate or drop a whole line.
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
            if rng.below(2) == 0 {
                let line = text[start..end].to_string();
                text.insert_str(start, &line);
            } else {
                text.replace_range(start..end, "");
            }
        }
        4 => {
            // Shift a line's indentation.
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            if rng.below(2) == 0 {
                text.insert(start, ' ');
            } else if text[start..].starts_with(' ') {
                text.remove(start);
            }
        }
        5 => {
            // Splice in part of another seed.
            let other = &seeds[rng.below(seeds.len())];
            let a = char_floor(other, rng.below(other.len() + 1));
            let b = char_floor(other, a + rng.below(200));
            text.insert_str(at, &other[a..b]);
        }
        6 => {
            // Replace one character with a random printable or control one.
            let c = char::from_u32(rng.below(0x80) as u32).unwrap_or('x');
            if at < text.len() {
                let next = text[at..].chars().next().map_or(1, char::len_utf8);
                text.replace_range(at..at + next, &c.to_string());
            }
        }
        _ => {
            if rng.below(2) == 0 {
                *text = text.replace('\n', "\r\n");
            } else {
                text.push_str(TOKENS[rng.below(TOKENS.len())]);
            }
        }
    }
}

/// Why an outcome that keeps the invariants is still worth a look: an internal error (valid
/// or invalid input is never meshjob's bug), or another outcome when the stream is parsed
/// whole instead of piece by piece.
fn triage(text: &str, out: &meshjob::run::Outcome) -> Option<String> {
    use meshjob::finding::Rule;
    if let Some(f) = out
        .fatal
        .iter()
        .chain(&out.findings)
        .find(|f| f.rule == Rule::Internal)
    {
        return Some(format!("internal error: {}", f.message));
    }
    let settings = meshjob::config::Settings::default();
    let whole = meshjob::run::process_reference(text, &settings, Default::default());
    let rules = |o: &meshjob::run::Outcome| {
        o.fatal
            .iter()
            .chain(&o.findings)
            .map(|f| (f.rule, f.offset))
            .collect::<Vec<_>>()
    };
    (whole.text != out.text || rules(&whole) != rules(out))
        .then(|| "the whole-stream parse gives another outcome".to_string())
}

#[test]
#[ignore = "a bounded fuzz run: scripts/fuzz.sh, or --ignored with MESHJOB_FUZZ_SECONDS"]
fn mutated_corpus_keeps_the_invariants() {
    let secs: u64 = std::env::var("MESHJOB_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let seed: u64 = std::env::var("MESHJOB_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let seeds = seeds();
    assert!(seeds.len() > 20, "seed corpus too small: {}", seeds.len());
    let mut rng = Rng(seed);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut runs, mut changed, mut fatal, mut triaged) = (0u64, 0u64, 0u64, 0u64);
    while Instant::now() < deadline {
        let mut text = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(6) {
            mutate(&mut rng, &seeds, &mut text);
        }
        let result = std::panic::catch_unwind(|| common::invariants::check(&text));
        let failure = match result {
            Ok(Ok(out)) => {
                if let Some(why) = triage(&text, &out) {
                    // Not an invariant, but a bug all the same: kept for a look.
                    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-triage");
                    let _ = std::fs::create_dir_all(&dir);
                    let _ = std::fs::write(dir.join(format!("seed{seed}-run{runs}.yaml")), &text);
                    eprintln!(
                        "fuzz smoke: run {runs} (seed {seed}): {why}; kept in {}",
                        dir.display()
                    );
                    triaged += 1;
                }
                if out.fatal.is_some() {
                    fatal += 1;
                } else if out.text != text {
                    changed += 1;
                }
                None
            }
            Ok(Err(e)) => Some(e),
            Err(_) => Some("panicked".to_string()),
        };
        if let Some(e) = failure {
            let crash = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-smoke-crash.yaml");
            let _ = std::fs::write(&crash, &text);
            panic!(
                "run {runs} (seed {seed}): {e}; input saved to {}",
                crash.display()
            );
        }
        runs += 1;
    }
    eprintln!(
        "fuzz smoke: {runs} inputs in {secs}s (seed {seed}): {changed} fixed, {fatal} fatal, \
         {triaged} kept in target/fuzz-triage"
    );
    assert!(runs > 0);
}
