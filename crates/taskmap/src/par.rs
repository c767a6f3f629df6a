//! Deterministic data parallelism on a pool that is passed down, never the global one.
//!
//! [`map_blocks`] cuts work into fixed blocks whose bounds do not depend on the thread
//! count; the blocks run on the pool's threads (or on the caller's when there is no pool)
//! and their results come back in block order, so a computation built from them gives the
//! same output with any number of threads. [`sweep`] runs label-propagation-style passes
//! in sub-rounds whose windows grow with the threads (for cache locality): the same output
//! for the same thread count.

use std::ops::Range;
use std::sync::Mutex;

use rayon::prelude::*;
use rayon::ThreadPool;

/// `f(scratch, block)` for the blocks `[i·block, min((i+1)·block, len))` of `0..len`, in
/// block order, on `pool`'s threads (or the caller's when `pool` is `None` or has one
/// thread). `init` makes a scratch value that several blocks may share (rayon makes one
/// per job); the result must not depend on which blocks shared it.
pub(crate) fn map_blocks<S, T, I, F>(
    pool: Option<&ThreadPool>,
    len: usize,
    block: usize,
    init: I,
    f: F,
) -> Vec<T>
where
    T: Send,
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, Range<usize>) -> T + Sync + Send,
{
    let block = block.max(1);
    let blocks = len.div_ceil(block);
    let range = |i: usize| i * block..((i + 1) * block).min(len);
    match pool {
        Some(pool) if blocks > 1 && pool.current_num_threads() > 1 => pool.install(|| {
            (0..blocks)
                .into_par_iter()
                .map_init(&init, |s, i| f(s, range(i)))
                .collect()
        }),
        _ => {
            let mut s = init();
            (0..blocks).map(|i| f(&mut s, range(i))).collect()
        }
    }
}

/// Tasks per chunk of a visit order ([`crate::multilevel::coarsen::local_random_order`]
/// shuffles chunks of this many consecutive ids).
const CHUNK: usize = crate::multilevel::coarsen::ORDER_CHUNK;

/// Sub-rounds per window of a [`sweep`]: each takes a slice of every chunk, so a task's
/// neighbours (mostly in its chunk) mostly decide in other sub-rounds and it sees their
/// moves.
pub(crate) const SUB_ROUNDS: usize = 16;

/// Chunks per window of a [`sweep`] and thread: a window's sub-rounds run one after the
/// other on rows and labels that stay in each thread's cache (16 chunks of a graph of
/// mean degree 6 hold about 200 KB of rows and labels, counted; on a million-task random geometric graph, windows of 4
/// to 16 chunks clustered in 2.3-2.6 s, of 256 chunks in 3.4-3.5 s, one thread).
const WINDOW_CHUNKS: usize = 16;

/// Chunks of a window per parallel block of a sub-round.
const BLOCK_CHUNKS: usize = 4;

/// A parallel sweep over the tasks of `order`, as label propagation makes them: the order
/// is cut into windows of [`WINDOW_CHUNKS`] chunks per thread of `pool`, each window into
/// [`SUB_ROUNDS`] sub-rounds (in every chunk, the `s`-th slice of its positions). In a
/// sub-round `rate(data, scratch, v)` proposes a move for each task from `data` as the
/// sub-round found it, in parallel on `pool`; then `apply(data, moves)` gets the
/// proposals in visit order, to apply those that still hold (a window shorter than a chunk
/// has fewer sub-rounds). Each thread keeps one scratch from `init` for the whole sweep.
/// The same thread count gives the same result; another thread count cuts other windows.
pub(crate) fn sweep<T, S, M, I, R, A>(
    pool: Option<&ThreadPool>,
    order: &[u32],
    data: &mut T,
    init: I,
    rate: R,
    mut apply: A,
) where
    T: Sync,
    S: Send,
    M: Send,
    I: Fn() -> S,
    R: Fn(&T, &mut S, u32) -> Option<M> + Sync + Send,
    A: FnMut(&mut T, Vec<Vec<M>>),
{
    let threads = pool.map_or(1, |p| p.current_num_threads());
    // One scratch per thread for the whole sweep (a block locks its thread's; nothing
    // else does, so the lock is free).
    let scratch: Vec<Mutex<S>> = (0..threads).map(|_| Mutex::new(init())).collect();
    for window in order.chunks(WINDOW_CHUNKS * threads * CHUNK) {
        let len = window.len();
        for sub in 0..SUB_ROUNDS {
            let (lo, hi) = (sub * CHUNK / SUB_ROUNDS, (sub + 1) * CHUNK / SUB_ROUNDS);
            if lo >= len {
                break;
            }
            let seen: &T = data;
            let moves = map_blocks(
                pool,
                len.div_ceil(CHUNK),
                BLOCK_CHUNKS,
                || (),
                |_, bs| {
                    let mine = rayon::current_thread_index().unwrap_or(0) % threads;
                    let mut s = scratch[mine].lock().unwrap_or_else(|e| e.into_inner());
                    let mut out = Vec::new();
                    for b in bs {
                        let first = b * CHUNK;
                        for &v in &window[(first + lo).min(len)..(first + hi).min(len)] {
                            out.extend(rate(seen, &mut s, v));
                        }
                    }
                    out
                },
            );
            apply(data, moves);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_in_order_with_any_pool() {
        let sums = |pool: Option<&ThreadPool>| {
            map_blocks(
                pool,
                1000,
                7,
                || 0usize,
                |calls, r| {
                    *calls += 1;
                    (r.start, r.end, r.sum::<usize>())
                },
            )
        };
        let seq = sums(None);
        assert_eq!(seq.len(), 143);
        assert_eq!(seq[0], (0, 7, 21));
        assert_eq!(seq[142], (994, 1000, (994..1000).sum()));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        assert_eq!(sums(Some(&pool)), seq);
    }

    /// Every task of the order is rated once per sweep, in sub-rounds that see the moves
    /// of the earlier ones; the proposals come back in visit order, the same for the same
    /// thread count.
    #[test]
    fn sweep_rates_every_task_once_in_visit_order() {
        let n = 3 * WINDOW_CHUNKS * CHUNK / 2 + 77;
        let order: Vec<u32> = (0..n as u32).rev().collect();
        let run = |pool: Option<&ThreadPool>| {
            // data: (sub-rounds done, the sub-round each task was rated in)
            let mut data = (0u32, vec![u32::MAX; n]);
            let mut seen = Vec::new();
            sweep(
                pool,
                &order,
                &mut data,
                || (),
                |d, _, v| Some((v, d.0)),
                |d, moves| {
                    for (v, sub) in moves.into_iter().flatten() {
                        assert_eq!(d.1[v as usize], u32::MAX, "task {v} rated twice");
                        d.1[v as usize] = sub;
                        seen.push(v);
                    }
                    d.0 += 1;
                },
            );
            (data, seen)
        };
        let (data, seen) = run(None);
        assert_eq!(data.0 as usize, 2 * SUB_ROUNDS);
        assert!(data.1.iter().all(|&s| (s as usize) < 2 * SUB_ROUNDS));
        assert_eq!(seen.len(), n);
        // The first sub-round takes the first slice of every chunk of the first window.
        assert_eq!(seen[0], order[0]);
        assert_eq!(seen[CHUNK / SUB_ROUNDS], order[CHUNK]);
        // One thread is no pool; two threads cut windows twice as long (one here).
        let pool = |t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
        };
        let (one, two) = (pool(1), pool(2));
        assert!(run(Some(&one)) == (data, seen), "one thread is not no pool");
        let (data2, seen2) = run(Some(&two));
        assert_eq!(data2.0 as usize, SUB_ROUNDS);
        assert_eq!(seen2.len(), n);
        assert!(
            run(Some(&two)) == (data2, seen2),
            "two threads, two results"
        );
    }
}
