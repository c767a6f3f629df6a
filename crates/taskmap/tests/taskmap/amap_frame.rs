//! The Algorithm Mapper at a frame the user gives, and the sweep of frames.

use taskmap::houstis::alloc::AllocParams;
use taskmap::houstis::amg::read_amg;
use taskmap::houstis::frame::{at_frame, frame_range, frame_sweep};
use taskmap::houstis::interconnect::Interconnect;
use taskmap::houstis::machine::Machine;
use taskmap::houstis::mapper::{algorithm_mapper, evaluate_assignment};
use taskmap::houstis::precedence::ParallelMatrix;

use crate::support::fixture;

fn machine(k: u32, system: &str) -> Machine {
    let ic: Interconnect = system.parse().unwrap();
    Machine::new(k, ic, 0.1, None).unwrap()
}

#[test]
fn a_frame_gives_a_scored_assignment_and_the_sweep_repeats_it() {
    let g = read_amg(&fixture("amap/cholesky4.amg")).unwrap();
    let det = g.deterministic().unwrap();
    let par = ParallelMatrix::new(&g, &det).unwrap();
    let m = machine(4, "dual-bus");
    let params = AllocParams::default();
    let (lo, hi) = frame_range(&det, &g, &m);
    assert!(lo > 0.0 && lo < hi);
    let frames: Vec<f64> = (0..8).map(|i| lo + (hi - lo) * i as f64 / 7.0).collect();
    let rows = frame_sweep(&g, &det, Some(&par), &m, &params, &frames).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let threaded = AllocParams {
        pool: Some(&pool),
        ..params
    };
    assert_eq!(
        rows,
        frame_sweep(&g, &det, Some(&par), &m, &threaded, &frames).unwrap()
    );
    for (row, &t) in rows.iter().zip(&frames) {
        let r = at_frame(&g, &det, Some(&par), &m, &params, t).unwrap();
        assert_eq!((row.frame, row.t_real, row.t_par), (t, r.t_real, r.t_par));
        assert!(row.fits);
        // at most k processors, and the report scores like any given assignment.
        assert!(r.processor.iter().all(|&p| p < 4));
        assert_eq!(row.reduced, row.clusters > 4);
        let again = evaluate_assignment(&g, &det, &m, r.processor.clone()).unwrap();
        assert_eq!((again.t_real, again.t_par), (r.t_real, r.t_par));
        // Δ keeps the modules that may run in parallel apart before step 2.
        assert!(row.clusters >= 4, "{row:?}");
    }
    // The mapper's own frame, the smallest that reaches the parallelism, is in range.
    let mapped = algorithm_mapper(&g, &det, Some(&par), &m, &params).unwrap();
    let t = mapped.step1_frame.unwrap();
    assert!(t >= lo * (1.0 - 1e-6) && t <= hi, "{lo} <= {t} <= {hi}");
}

#[test]
fn without_delta_the_largest_frame_holds_the_program_on_one_processor() {
    let g = read_amg(&fixture("amap/cholesky4.amg")).unwrap();
    let det = g.deterministic().unwrap();
    let m = machine(4, "bus");
    let params = AllocParams::default();
    let (lo, hi) = frame_range(&det, &g, &m);
    let r = at_frame(&g, &det, None, &m, &params, hi).unwrap();
    assert_eq!(r.step1.unwrap().2, 1);
    assert!(r.processor.iter().all(|&p| p == r.processor[0]));
    assert_eq!(r.t_real, r.t_seq);
    // Below the longest module nothing fits: an error for one frame, a row that says so
    // in a sweep.
    let small = 0.5 * det.time.iter().copied().fold(0.0, f64::max);
    let e = at_frame(&g, &det, None, &m, &params, small).unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
    let rows = frame_sweep(&g, &det, None, &m, &params, &[small, lo]).unwrap();
    assert!(!rows[0].fits && rows[1].fits);
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(at_frame(&g, &det, None, &m, &params, bad).is_err());
    }
}
