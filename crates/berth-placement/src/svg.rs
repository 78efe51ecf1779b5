//! A rack diagram of a placement as SVG text: one column per rack (the leaves' parent in the
//! location tree), one box per host with a utilisation bar per dimension and its resources.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use berth_topology::{LeafId, LocVertexId};

use crate::instance::Instance;

const COL_W: u32 = 200;
const PAD: u32 = 10;
const BAR_H: u32 = 8;
const LINE_H: u32 = 12;
const MAX_NAMES: usize = 6;
const MAX_COLUMNS: usize = 120;

/// Renders the placement on the location tree. Columns are racks with at least one used
/// leaf (at most 120, in location order; a note says how many were left out).
#[must_use]
pub fn render_svg(inst: &Instance, assignment: &[Option<LeafId>]) -> String {
    let topo = &inst.topo;
    let mut on: BTreeMap<LeafId, Vec<&str>> = BTreeMap::new();
    let mut load: BTreeMap<LeafId, Vec<i64>> = BTreeMap::new();
    for (i, it) in inst.items.iter().enumerate() {
        if let Some(Some(l)) = assignment.get(i) {
            on.entry(*l).or_default().push(&it.name);
            let v = load.entry(*l).or_insert_with(|| vec![0; inst.dims]);
            for (k, d) in it.demand.iter().enumerate() {
                v[k] += d;
            }
        }
    }
    let rack_of = |l: LeafId| {
        topo.loc_parent(topo.leaf_location(l))
            .unwrap_or(topo.leaf_location(l))
    };
    let mut racks: Vec<LocVertexId> = on.keys().map(|&l| rack_of(l)).collect();
    racks.sort_unstable();
    racks.dedup();
    let left_out = racks.len().saturating_sub(MAX_COLUMNS);
    racks.truncate(MAX_COLUMNS);
    let dims = inst.dims;
    let box_h = |names: usize| {
        18 + dims as u32 * (BAR_H + 2) + names.min(MAX_NAMES + 1) as u32 * LINE_H + 4
    };

    let mut body = String::new();
    let mut height = 0u32;
    for (c, &rack) in racks.iter().enumerate() {
        let x = PAD + c as u32 * (COL_W + PAD);
        let mut y = PAD;
        let _ = writeln!(
            body,
            r##"<text x="{}" y="{}" font-weight="bold">{}</text>"##,
            x,
            y + 12,
            esc(topo.loc_name(rack))
        );
        y += 20;
        let range = topo.leaves_under(rack);
        for l in range {
            let leaf = LeafId(l);
            let names = on.get(&leaf).map_or(&[][..], Vec::as_slice);
            let h = box_h(names.len());
            let fill = if names.is_empty() {
                "#f4f4f4"
            } else {
                "#ffffff"
            };
            let _ = writeln!(
                body,
                r##"<rect x="{x}" y="{y}" width="{COL_W}" height="{h}" fill="{fill}" stroke="#555"/>"##
            );
            let _ = writeln!(
                body,
                r##"<text x="{}" y="{}">{}</text>"##,
                x + 4,
                y + 13,
                esc(topo.leaf_name(leaf))
            );
            let mut by = y + 18;
            let cap = topo.leaf_capacity(leaf);
            for d in 0..dims {
                let used = load.get(&leaf).map_or(0, |v| v[d]);
                let frac = if cap[d] > 0 {
                    (used as f64 / cap[d] as f64).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let bw = COL_W - 70;
                let colour = if frac > 0.9 {
                    "#d9534f"
                } else if frac > 0.6 {
                    "#f0ad4e"
                } else {
                    "#5cb85c"
                };
                let _ = writeln!(
                    body,
                    r##"<rect x="{}" y="{by}" width="{bw}" height="{BAR_H}" fill="#e0e0e0"/><rect x="{}" y="{by}" width="{:.1}" height="{BAR_H}" fill="{colour}"/><text x="{}" y="{}" font-size="8">{} {:.0}%</text>"##,
                    x + 4,
                    x + 4,
                    frac * f64::from(bw),
                    x + 8 + bw,
                    by + BAR_H,
                    esc(&topo.dimensions()[d]),
                    frac * 100.0
                );
                by += BAR_H + 2;
            }
            for (k, n) in names.iter().enumerate() {
                let text = if k == MAX_NAMES {
                    format!("+{} more", names.len() - MAX_NAMES)
                } else {
                    (*n).to_owned()
                };
                let _ = writeln!(
                    body,
                    r##"<text x="{}" y="{}">{}</text>"##,
                    x + 4,
                    by + LINE_H - 2,
                    esc(&text)
                );
                by += LINE_H;
                if k == MAX_NAMES {
                    break;
                }
            }
            y += h + 4;
        }
        height = height.max(y);
    }
    if left_out > 0 {
        let _ = writeln!(
            body,
            r##"<text x="{PAD}" y="{}">{left_out} more racks not shown</text>"##,
            height + 14
        );
        height += 20;
    }
    let width = PAD + racks.len().max(1) as u32 * (COL_W + PAD);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"10\">\n{body}</svg>\n",
        height + PAD
    )
}

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}
