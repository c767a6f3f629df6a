//! Link congestion of a mapping: the traffic of every task edge routed over the target's
//! links ([`taskmap_arch::TrafficRoutes`]), as LibTopoMap reports it.
//!
//! A task edge `{u, v}` of weight `w` sends `w` from `u`'s PE to `v`'s and `w` back (the
//! two entries of the symmetric adjacency), so the loads of all links add up to
//! `Σ w · (links of the route there + links of the route back)`: `2 f_C` on targets whose
//! routes cross `distance` links (meshes, tori, hypercubes, unit-weight graphs).

use rustc_hash::FxHashMap;
use serde::Serialize;
use taskmap_arch::{Architecture, PeId, MAX_TRAFFIC_LINKS};
use taskmap_graph::TaskGraph;

use crate::mapping::Mapping;

/// How many of the busiest links a report names.
pub const BUSIEST_LINKS: usize = 10;

/// A link and its load.
#[derive(Clone, Debug, Serialize)]
pub struct BusyLink {
    /// Its id, an index of [`Congestion::loads`].
    pub link: u64,
    /// Its name (`"3->4"`, `"level-1 group 2 up"`).
    pub name: String,
    /// The traffic it carries.
    pub load: f64,
}

/// The link loads of a mapping.
#[derive(Clone, Debug, Serialize)]
pub struct Congestion {
    /// The routing followed.
    pub routing: String,
    /// Directed links of the target, and those that carry traffic.
    pub links: u64,
    pub links_used: u64,
    /// The largest load, and the mean over the links.
    pub max_load: f64,
    pub mean_load: f64,
    /// The busiest links, most loaded first (ties: lower id), at most [`BUSIEST_LINKS`].
    pub busiest: Vec<BusyLink>,
    /// The load of every link id (ids that are no link, as the `+` links of a mesh's upper
    /// boundary, stay 0).
    pub loads: Vec<f64>,
}

/// The congestion of `mapping` (of `graph`, on `arch`), or `None` when the target has no
/// routes (a distance matrix) or more than [`MAX_TRAFFIC_LINKS`] links.
pub fn congestion(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    mapping: &Mapping,
) -> Option<Congestion> {
    let routes = arch.traffic_routes()?;
    let ids = routes.link_count();
    if ids > MAX_TRAFFIC_LINKS {
        return None;
    }
    let links = (0..ids).filter(|&l| routes.exists(l)).count() as u64;
    // The traffic between every ordered pair of PEs, grouped by source.
    let pes = mapping.as_slice();
    let mut pairs: FxHashMap<(u32, u32), u64> = FxHashMap::default();
    for u in 0..graph.num_tasks() as u32 {
        let p = pes[u as usize].0;
        for (&v, &w) in graph.neighbors(u).iter().zip(graph.edge_weights(u)) {
            let q = pes[v as usize].0;
            if p != q {
                let e = pairs.entry((p, q)).or_insert(0);
                *e = e.saturating_add(w);
            }
        }
    }
    let mut pairs: Vec<((u32, u32), u64)> = pairs.into_iter().collect();
    pairs.sort_unstable();
    let mut loads = vec![0f64; ids as usize];
    let mut demands: Vec<(PeId, f64)> = Vec::new();
    for group in pairs.chunk_by(|a, b| a.0 .0 == b.0 .0) {
        demands.clear();
        demands.extend(group.iter().map(|&((_, q), w)| (PeId(q), w as f64)));
        routes.spread(PeId(group[0].0 .0), &demands, &mut loads);
    }
    let links_used = loads.iter().filter(|&&l| l > 0.0).count() as u64;
    let max_load = loads.iter().copied().fold(0.0, f64::max);
    let mean_load = if links == 0 {
        0.0
    } else {
        loads.iter().sum::<f64>() / links as f64
    };
    let mut order: Vec<u64> = (0..ids).filter(|&l| loads[l as usize] > 0.0).collect();
    let top = BUSIEST_LINKS.min(order.len());
    let by_load = |a: &u64, b: &u64| {
        loads[*b as usize]
            .total_cmp(&loads[*a as usize])
            .then(a.cmp(b))
    };
    if top > 0 {
        order.select_nth_unstable_by(top - 1, by_load);
    }
    order.truncate(top);
    order.sort_by(by_load);
    let busiest = order
        .into_iter()
        .map(|l| BusyLink {
            link: l,
            name: routes.link_name(l),
            load: loads[l as usize],
        })
        .collect();
    Some(Congestion {
        routing: routes.kind().to_string(),
        links,
        links_used,
        max_load,
        mean_load,
        busiest,
        loads,
    })
}
