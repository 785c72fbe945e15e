//! UTF-16 and UTF-32 inputs are named as such, with an `iconv` command that really converts
//! them; binary files and UTF-8 text are not mistaken for them.

mod common;

use meshjob::{Wide, decode, wide_encoding};
use std::io::Write;
use std::process::{Command, Stdio};

const JOB: &str = "apiVersion: batch/v1\nkind: Job # é, 🙂\nmetadata:\n  name: pi\n";

fn encode(text: &str, wide: Wide) -> Vec<u8> {
    let mut units: Vec<u32> = Vec::new();
    if wide.bom {
        units.push(0xFEFF);
    }
    if wide.unit == 2 {
        units.extend(text.encode_utf16().map(u32::from));
    } else {
        units.extend(text.chars().map(u32::from));
    }
    units
        .into_iter()
        .flat_map(|u| {
            let b = u.to_be_bytes();
            let b = if wide.unit == 2 {
                vec![b[2], b[3]]
            } else {
                b.to_vec()
            };
            if wide.big_endian {
                b
            } else {
                b.into_iter().rev().collect()
            }
        })
        .collect()
}

fn all() -> Vec<Wide> {
    let mut out = Vec::new();
    for unit in [2, 4] {
        for big_endian in [false, true] {
            for bom in [false, true] {
                out.push(Wide {
                    unit,
                    big_endian,
                    bom,
                });
            }
        }
    }
    out
}

#[test]
fn every_wide_encoding_is_named_with_a_working_iconv_command() {
    let iconv = common::require_tool("iconv", "checks the conversion command the error gives");
    for wide in all() {
        let bytes = encode(JOB, wide);
        assert_eq!(wide_encoding(&bytes), Some(wide));
        let (offset, message) = decode(&bytes).expect_err("not UTF-8");
        assert_eq!(offset, 0);
        let from = wide.iconv_name();
        assert!(
            message.contains(&format!("`iconv -f {from} -t UTF-8 ")),
            "{message}"
        );
        let Some(iconv) = &iconv else { continue };
        let mut child = Command::new(iconv)
            .args(["-f", &from, "-t", "UTF-8"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("run iconv");
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let out = child.wait_with_output().expect("iconv output");
        assert!(out.status.success(), "{wide}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), JOB, "{wide}: {from}");
    }
}

#[test]
fn binary_and_utf8_are_not_taken_for_wide_text() {
    for bytes in [
        &b"\x7fELF\x02\x01\x01\x00\x00\x00"[..],
        b"a\x00\x00\x01binary",
        b"\x00\x01\x02\x03",
        b"a\x00b\x00\xff\x00",
    ] {
        assert_eq!(wide_encoding(bytes), None, "{bytes:?}");
        let (_, message) = decode(bytes).expect_err("binary");
        assert!(message.starts_with("binary file"), "{message}");
    }
    for text in [JOB, "\u{feff}kind: Job\n", "", "a", "ab"] {
        assert_eq!(wide_encoding(text.as_bytes()), None);
        assert_eq!(decode(text.as_bytes()), Ok(text));
    }
}

/// A UTF-16 file where meshjob reads a dump (`audit`) or versions (`--versions-from`, and
/// `versions`) is named as such with the `iconv` command `check` gives, exit 2: not "not
/// UTF-8 text", and not read as holding nothing.
#[test]
fn audit_and_versions_from_name_utf16_with_the_iconv_command_check_gives() {
    let dump = "apiVersion: v1\nitems: []\nkind: List\n";
    let operator =
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  tag: 1.29.1\n";
    let wide = Wide {
        unit: 2,
        big_endian: false,
        bom: true,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("dump.yaml"), encode(dump, wide)).expect("write");
    std::fs::write(dir.path().join("istio.yaml"), encode(operator, wide)).expect("write");
    std::fs::write(dir.path().join("job.yaml"), JOB).expect("write");
    let advice = "looks like UTF-16LE text (it starts with a byte order mark), not UTF-8; YAML \
                  manifests must be UTF-8: convert it (for example `iconv -f UTF-16 -t UTF-8 \
                  FILE > FILE.utf8`, then replace FILE with it)";
    let check = common::run(
        common::meshjob()
            .current_dir(dir.path())
            .args(["check", "istio.yaml"]),
        None,
    );
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(stderr.contains(advice), "check gives the advice: {stderr}");
    for (args, place) in [
        (&["audit", "dump.yaml"][..], "dump.yaml:1:1: "),
        (
            &["versions", "--versions-from", "istio.yaml"][..],
            "--versions-from: istio.yaml:1:1: ",
        ),
        (
            &["check", "--versions-from", "istio.yaml", "job.yaml"][..],
            "--versions-from: istio.yaml:1:1: ",
        ),
    ] {
        let o = common::run(common::meshjob().current_dir(dir.path()).args(args), None);
        assert_eq!(o.code, 2, "{args:?}: {}", o.show());
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!("meshjob: error: {place}{advice}\n"),
            "{args:?}"
        );
        assert!(o.stdout.is_empty(), "{args:?}: {}", o.show());
    }
}
