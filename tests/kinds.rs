//! The batch kinds beyond Job and CronJob (`testdata/kinds/`), whose schemas are CRDs that
//! no validator here knows: in every golden case, `fix` changes nothing but the pods of the
//! kinds table, at the paths where each kind keeps them (the pod template of a kind whose
//! containers are written; the pod metadata of one whose controller writes them). The
//! golden test itself checks that the output parses, reads back as intended, and that a
//! second run changes nothing.

mod common;

use meshjob::{Seg, Value, locate, parse_stream};

/// The paths, from the document root, where `a` and `b` differ.
fn differences(a: &Value, b: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match (a, b) {
        (Value::Map(x), Value::Map(y)) => {
            let key = |k: &Value| match k {
                Value::Scalar(_, s) => s.to_string(),
                other => format!("{other:?}"),
            };
            let mut keys: Vec<String> = x.iter().chain(y).map(|(k, _)| key(k)).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                at.push(Seg::Key(k.clone()));
                match (a.get(&k), b.get(&k)) {
                    (Some(p), Some(q)) => differences(p, q, at, out),
                    _ => out.push(at.clone()),
                }
                at.pop();
            }
        }
        (Value::Seq(x), Value::Seq(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                at.push(Seg::Index(i));
                differences(p, q, at, out);
                at.pop();
            }
        }
        _ if !a.matches(b) => out.push(at.clone()),
        _ => {}
    }
}

#[test]
fn only_the_pods_of_each_kind_change() {
    let dir = common::root().join("testdata/kinds");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata/kinds")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("expected.yaml").is_file())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 40,
        "expected the kinds cases, found {}",
        cases.len()
    );
    let (mut failures, mut changed) = (Vec::new(), 0);
    for case in &cases {
        let input = case.join("input.yaml");
        let settings = common::case_settings(&input);
        let before = std::fs::read_to_string(&input).expect("input");
        let after = std::fs::read_to_string(case.join("expected.yaml")).expect("expected");
        let (Ok(a), Ok(b)) = (parse_stream(&before), parse_stream(&after)) else {
            failures.push(format!("{}: does not parse", case.display()));
            continue;
        };
        if a.len() != b.len() {
            failures.push(format!("{}: documents added or lost", case.display()));
            continue;
        }
        for (x, y) in a.iter().zip(&b) {
            let mut diffs = Vec::new();
            differences(
                &Value::from_node(&x.root),
                &Value::from_node(&y.root),
                &mut Vec::new(),
                &mut diffs,
            );
            changed += usize::from(!diffs.is_empty());
            let pods = locate(&x.root, &settings.kinds).pods;
            let allowed: Vec<Vec<Seg>> = pods
                .iter()
                .map(|p| {
                    if p.has_pod_spec() {
                        p.path.clone()
                    } else {
                        p.metadata_path()
                    }
                })
                .collect();
            for d in diffs {
                if !allowed.iter().any(|a| d.starts_with(a)) {
                    failures.push(format!(
                        "{}: {d:?} changed, outside the pods {allowed:?}",
                        case.display()
                    ));
                }
            }
        }
    }
    assert!(
        changed >= 30,
        "expected most kinds cases to change something: {changed}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
