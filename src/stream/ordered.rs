//! An in-order map over threads, with a bounded number of items in flight.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// Runs `work` on the items of `source` on `threads` threads and gives the results to `sink`
/// in the order of the items, with at most `in_flight` items read but not yet sunk. `sink`
/// returns false to stop: nothing more is read. The source is handed back, for whoever wants
/// to read on, with the results of the items that were in flight, in order.
pub(crate) fn ordered<S, T, U, W, K>(
    threads: usize,
    in_flight: usize,
    mut source: S,
    work: W,
    mut sink: K,
) -> (S, Vec<U>)
where
    S: Iterator<Item = T> + Send,
    T: Send,
    U: Send,
    W: Fn(T) -> U + Sync,
    K: FnMut(U) -> bool,
{
    let threads = threads.max(1);
    let in_flight = in_flight.max(threads + 1);
    std::thread::scope(|s| {
        let (mut token_tx, token_rx) = mpsc::sync_channel::<()>(in_flight);
        for _ in 0..in_flight {
            let _ = token_tx.send(());
        }
        let (job_tx, job_rx) = mpsc::sync_channel::<(u64, T)>(in_flight);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (done_tx, done_rx) = mpsc::channel::<(u64, U)>();
        let reader = s.spawn(move || {
            let mut seq = 0u64;
            while token_rx.recv().is_ok() {
                let Some(item) = source.next() else {
                    break;
                };
                if job_tx.send((seq, item)).is_err() {
                    break;
                }
                seq += 1;
            }
            source
        });
        for _ in 0..threads {
            let job_rx = Arc::clone(&job_rx);
            let done_tx = done_tx.clone();
            let work = &work;
            s.spawn(move || {
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok((seq, item)) = job else {
                        break;
                    };
                    if done_tx.send((seq, work(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut waiting: BTreeMap<u64, U> = BTreeMap::new();
        let mut next = 0u64;
        let mut stopped = false;
        while let Ok((seq, u)) = done_rx.recv() {
            waiting.insert(seq, u);
            if stopped {
                continue;
            }
            while let Some(u) = waiting.remove(&next) {
                next += 1;
                if !sink(u) {
                    // No more tokens: the reader stops, the workers finish what they hold.
                    stopped = true;
                    drop(std::mem::replace(&mut token_tx, mpsc::sync_channel(1).0));
                    break;
                }
                let _ = token_tx.send(());
            }
        }
        drop(token_tx);
        let source = reader
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (source, waiting.into_values().collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_keeps_the_order() {
        let mut got = Vec::new();
        ordered(
            3,
            4,
            0..1000u32,
            |i| {
                if i % 7 == 0 {
                    std::thread::yield_now();
                }
                i * 2
            },
            |u| {
                got.push(u);
                true
            },
        );
        assert_eq!(got, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
    }
}
