//! Directory walks: each directory and file is visited once, by device and inode, so symlink
//! loops end and a file reached by two paths is edited and reported once.

mod common;

use meshjob::Spelling;
use meshjob::{Origin, expand};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  template:\n    spec:\n      containers:\n      - name: pi\n        image: perl\n        command: [perl]\n      restartPolicy: Never\n";

fn files(args: &[&Path]) -> Vec<PathBuf> {
    let args: Vec<String> = args.iter().map(|p| p.display().to_string()).collect();
    let e = expand(&args, &Spelling::current(), None, &mut |_, _| None);
    assert!(e.errors.is_empty(), "{:?}", e.errors);
    e.inputs
        .into_iter()
        .map(|i| match i.origin {
            Origin::File(p) => p,
            Origin::Stdin => panic!("no stdin here"),
        })
        .collect()
}

#[test]
fn symlink_loops_are_walked_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("job.yaml"), JOB).unwrap();
    // Two links back to the directory: without a visited set the walk branches at every level.
    symlink(".", d.join("again")).unwrap();
    symlink(".", d.join("more")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    symlink("..", d.join("sub/up")).unwrap();
    assert_eq!(files(&[d]), vec![d.join("job.yaml")]);
}

#[test]
fn a_file_reached_twice_is_listed_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.yaml"), JOB).unwrap();
    symlink("a.yaml", d.join("b.yaml")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("sub/c.yml"), JOB).unwrap();
    symlink("sub", d.join("link-to-sub")).unwrap();
    // Named twice, named and walked, linked: each file once, under the first path.
    let a = d.join("a.yaml");
    assert_eq!(
        files(&[&a, d, &a]),
        vec![a.clone(), d.join("link-to-sub/c.yml")]
    );
    // A link that reaches a directory walked later keeps the link's path (sorted order).
    assert_eq!(files(&[d]), vec![a, d.join("link-to-sub/c.yml")]);
}

#[test]
fn check_on_a_looping_directory_ends_and_reports_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("job.yaml"), JOB).unwrap();
    symlink(".", d.join("x")).unwrap();
    symlink(".", d.join("y")).unwrap();
    let mut child = Command::new(common::bin())
        .arg("check")
        .arg(d)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run meshjob");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("meshjob check did not end on a directory with symlink loops");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&out.stdout);
    let headers = diff.lines().filter(|l| l.starts_with("--- a/")).count();
    assert_eq!(headers, 1, "{diff}");
}
