// Berth console: plain JS, no build step. Reads /ui/api/* (same origin, the browser's HTTP
// Basic credentials), follows /ui/api/events, draws SVG. Text from the server only ever
// reaches the page through textContent/attributes, never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const HOUR = 3600e3;
// Width of the timeline's band names.
const TL_LABEL = 210;
const state = {
  view: "timeline",
  t0: Date.now() - 6 * HOUR,
  t1: Date.now() + 42 * HOUR,
  cal: null,
  plans: [],
  pool: "",
  site: null,
};

function $(id) { return document.getElementById(id); }

// Absolute and without userinfo: fetch refuses URLs resolved against a page address that
// carries credentials (http://user:pw@host/ui/).
function apiUrl(path) { return location.origin + "/ui/api/" + path; }

function el(tag, attrs, ...kids) {
  const svg = ["svg", "g", "rect", "line", "text", "path", "title", "polygon", "polyline", "circle"].includes(tag);
  const e = svg ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.setAttribute("class", v);
    else if (k === "text") e.textContent = String(v);
    else e.setAttribute(k, String(v));
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

async function getJson(url, opts) {
  const r = await fetch(apiUrl(url), Object.assign({ headers: { Accept: "application/json" } }, opts));
  const body = await r.json().catch(() => null);
  if (!r.ok) {
    const detail = (body && (body.detail || body.message || body.title)) || r.statusText;
    const err = new Error(detail);
    err.body = body;
    throw err;
  }
  return body;
}

function fmtTime(ms, span) {
  const d = new Date(ms);
  const iso = d.toISOString();
  if (span > 4 * 24 * HOUR) return iso.slice(5, 10);
  if (span > 24 * HOUR) return iso.slice(5, 10) + " " + iso.slice(11, 16);
  return iso.slice(11, 16);
}

function amountsText(a) {
  return Object.entries(a || {}).map(([k, v]) => `${k} ${v}`).join(", ");
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// A pool as people name it: its zone and its provider's name (the id only on hover).
function poolName(p) {
  const prov = p.provider_name || (UUID.test(p.provider) ? `${p.provider_type || "provider"} ${p.provider.slice(0, 8)}` : p.provider);
  return `${p.zone} · ${prov}`;
}

// Tenant and region given at add-provider, when there are any.
function poolDetail(p) {
  return [p.tenant && "tenant " + p.tenant, p.region && "region " + p.region].filter(Boolean).join(", ");
}

// Everything known of a pool, for its tooltip.
function poolTip(p) {
  return [`pool ${p.id}`, `provider ${p.provider}${p.provider_type ? " (" + p.provider_type + ")" : ""}`, poolDetail(p)].filter(Boolean).join("\n");
}

function poolById(id) {
  const cal = state.cal;
  const p = cal && cal.pools.find((q) => q.id === id);
  if (p) return p;
  const [zone, provider] = id.split("/");
  return { id, zone, provider: provider || "" };
}

// ---- views -------------------------------------------------------------------------------

function show(view) {
  if (!["timeline", "utilization", "plans", "racks"].includes(view)) view = "timeline";
  state.view = view;
  for (const s of document.querySelectorAll(".view")) s.hidden = s.id !== "view-" + view;
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === view);
  document.body.dataset.view = view;
  if (view === "timeline" || view === "utilization") loadCalendar();
  if (view === "plans") loadPlans();
  if (view === "racks") loadSite();
}

// ---- calendar (timeline and utilization) -------------------------------------------------

let calendarSeq = 0;
async function loadCalendar() {
  const span = state.t1 - state.t0;
  // A margin on both sides so panning a little needs no refetch to look right.
  const from = new Date(state.t0 - span / 2).toISOString();
  const to = new Date(state.t1 + span / 2).toISOString();
  const mine = ++calendarSeq;
  try {
    const cal = await getJson(`calendar?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
    if (mine !== calendarSeq) return;
    state.cal = cal;
    document.body.dataset.calendarLoaded = String(Date.now());
    drawTimeline();
    drawUtilization();
    afterCalendar();
  } catch (e) {
    showError($("timeline"), "cannot load the calendar: " + e.message);
  }
}

function showError(where, text) {
  where.replaceChildren(el("div", { class: "error-box", text }));
}

function packLanes(items) {
  // Greedy interval packing: each item takes the first lane free at its start.
  const ends = [];
  const lane = new Map();
  for (const it of items) {
    let i = ends.findIndex((e) => e <= it.s);
    if (i < 0) { i = ends.length; ends.push(0); }
    ends[i] = it.e;
    lane.set(it.id, i);
  }
  return { lane, lanes: Math.max(1, ends.length) };
}

function drawTimeline() {
  const box = $("timeline");
  const cal = state.cal;
  if (!cal) return;
  const W = Math.max(600, box.clientWidth || 1000);
  const LABEL = TL_LABEL, AXIS = 26, LANE = 18, GAP = 10;
  const t0 = state.t0, t1 = state.t1, span = t1 - t0;
  const x = (t) => LABEL + ((t - t0) / span) * (W - LABEL - 10);
  const far = Date.parse(cal.to) + 10 * span;
  const ms = (s, dflt) => (s ? Date.parse(s) : dflt);
  $("tl-range").textContent = `${new Date(t0).toISOString().slice(0, 16)}Z — ${new Date(t1).toISOString().slice(0, 16)}Z`;

  const byPool = new Map();
  const pool = (id) => {
    if (!byPool.has(id)) byPool.set(id, { res: [], alloc: [], caps: [] });
    return byPool.get(id);
  };
  // One band per pool, or per zone (a zone's pools are its providers).
  const byZone = $("tl-group").value === "zone";
  const key = (id) => (byZone ? id.split("/")[0] : id);
  for (const r of cal.reservations) pool(key(r.pool)).res.push(r);
  for (const a of cal.allocations) pool(key(a.pool)).alloc.push(a);
  const showAll = $("tl-all").checked;
  for (const p of cal.pools) if (showAll) pool(key(p.id));
  for (const c of cal.capacity_changes) if (byPool.has(key(c.pool))) byPool.get(key(c.pool)).caps.push(c);
  const ids = [...byPool.keys()].sort();
  $("tl-empty").hidden = cal.reservations.length + cal.allocations.length > 0;

  let y = AXIS;
  const rows = [];
  // A band counts what the visible window shows, not the margin fetched around it.
  const visible = (r) => ms(r.start) < t1 && ms(r.end, far) > t0;
  for (const id of ids) {
    const p = byPool.get(id);
    const info = byZone ? null : poolById(id);
    const label = info ? poolName(info) : id;
    const tip = info ? poolTip(info) : `zone ${id}: ${cal.pools.filter((q) => q.zone === id).map((q) => poolName(q)).join(", ")}`;
    const lines = [];
    if (info && poolDetail(info)) lines.push(poolDetail(info));
    const nr = p.res.filter(visible).length, na = p.alloc.filter(visible).length;
    const counts = [];
    if (nr) counts.push(`${nr} reservation${nr > 1 ? "s" : ""}`);
    if (na) counts.push(`${na} allocation${na > 1 ? "s" : ""}`);
    lines.push(counts.join(", ") || "nothing in view");
    const items = p.res.map((r) => ({ id: r.id, s: ms(r.start), e: ms(r.end, far) }))
      .sort((a, b) => a.s - b.s || (a.id < b.id ? -1 : 1));
    const packed = packLanes(items);
    const allocItems = p.alloc.map((a) => ({ id: a.id, s: ms(a.start), e: ms(a.end, far) }))
      .sort((a, b) => a.s - b.s);
    const allocPacked = packLanes(allocItems);
    const h = Math.max((packed.lanes + (p.alloc.length ? allocPacked.lanes : 0)) * LANE + 22, 18 + 14 * lines.length);
    rows.push({ id, p, y, h, packed, allocPacked, label, tip, lines, nr, na });
    y += h + GAP;
  }
  const H = Math.max(y, AXIS + 60);
  const svg = el("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-testid": "timeline-svg" });

  // Axis and grid.
  const axis = el("g", { class: "axis" });
  const steps = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 2 * 24 * HOUR, 7 * 24 * HOUR, 30 * 24 * HOUR];
  const step = steps.find((s) => span / s <= 12) || steps[steps.length - 1];
  for (let t = Math.ceil(t0 / step) * step; t < t1; t += step) {
    axis.append(el("line", { class: "grid", x1: x(t), x2: x(t), y1: AXIS - 4, y2: H }));
    axis.append(el("text", { x: x(t) + 2, y: 14, text: fmtTime(t, span) + (step < 24 * HOUR ? "" : "") }));
  }
  svg.append(axis);

  for (const row of rows) {
    const g = el("g", { "data-pool": row.id });
    g.append(el("line", { class: "pool-sep", x1: 0, x2: W, y1: row.y - GAP / 2, y2: row.y - GAP / 2 }));
    g.dataset.reservations = String(row.nr);
    g.dataset.allocations = String(row.na);
    const label = row.label.length > 30 ? row.label.slice(0, 29) + "…" : row.label;
    g.append(el("text", { class: "pool-label", x: 6, y: row.y + 12, text: label }, el("title", { text: row.tip })));
    row.lines.forEach((line, i) => {
      g.append(el("text", { x: 6, y: row.y + 26 + 14 * i, class: "hint" + (i === row.lines.length - 1 ? " pool-count" : " pool-detail"), text: line.length > 34 ? line.slice(0, 33) + "…" : line }, el("title", { text: line })));
    });
    for (const r of row.p.res) {
      const s = Math.max(ms(r.start), t0 - span), e = Math.min(ms(r.end, far), t1 + span);
      if (e < t0 || s > t1) continue;
      const ly = row.y + 4 + row.packed.lane.get(r.id) * LANE;
      const cls = ["bar", r.preempted_by ? "preempted" : "res", r.state, r.at_risk ? "risk" : ""].join(" ");
      const bx = Math.max(LABEL, x(s)), bw = Math.max(3, Math.min(W - 10, x(e)) - bx);
      const rect = el("rect", { class: cls, x: bx, y: ly, width: bw, height: LANE - 4, rx: 2, "data-reservation-id": r.id, "data-state": r.state });
      const tip = `${r.id} in ${poolName(poolById(r.pool))} (${r.pool}): ${r.state}${r.preempted_by ? " (preempted by " + r.preempted_by + ")" : ""}${r.at_risk ? " AT RISK" : ""}\n` +
        `${r.start} → ${r.end || "open"}\npriority ${r.priority}${r.tenant ? ", tenant " + r.tenant : ""}\n` +
        `reserved: ${amountsText(r.amounts)}\nallocated: ${amountsText(r.allocated) || "nothing"}`;
      rect.append(el("title", { text: tip }));
      g.append(rect);
      if (bw > 40) g.append(el("text", { class: "bar-label" + (r.state === "cancelled" && !r.preempted_by ? " cancelled" : ""), x: bx + 4, y: ly + LANE - 8, text: `${r.id} ${amountsText(r.amounts)}`.slice(0, Math.floor(bw / 6)) }));
    }
    const base = row.y + 4 + row.packed.lanes * LANE;
    for (const a of row.p.alloc) {
      const s = Math.max(ms(a.start), t0 - span), e = Math.min(ms(a.end, far), t1 + span);
      if (e < t0 || s > t1) continue;
      const ly = base + row.allocPacked.lane.get(a.id) * LANE;
      const cls = ["bar", a.preempted_by ? "preempted" : "alloc", a.state, a.at_risk ? "risk" : ""].join(" ");
      const bx = Math.max(LABEL, x(s)), bw = Math.max(3, Math.min(W - 10, x(e)) - bx);
      const rect = el("rect", { class: cls, x: bx, y: ly + 1, width: bw, height: LANE - 4, rx: 2, "data-allocation-id": a.id });
      rect.append(el("title", { text: `${a.id} ${a.state}${a.reservation ? " from " + a.reservation : ""}${a.preempted_by ? " (preempted by " + a.preempted_by + ")" : ""}\n${a.start} → ${a.end || "open"}\n${amountsText(a.amounts)}` }));
      g.append(rect);
      if (bw > 40) g.append(el("text", { class: "bar-label", x: bx + 4, y: ly + LANE - 6, text: `${a.id}${a.reservation ? " ← " + a.reservation : ""} ${amountsText(a.amounts)}`.slice(0, Math.floor(bw / 6)) }));
    }
    for (const c of row.p.caps) {
      const t = Date.parse(c.at);
      if (t < t0 || t > t1) continue;
      const cx = x(t), cy = row.y + 2;
      const m = el("polygon", { class: "cap-mark", points: `${cx},${cy - 5} ${cx + 5},${cy} ${cx},${cy + 5} ${cx - 5},${cy}`, "data-capacity-change": c.dimension });
      m.append(el("title", { text: `${c.at}: ${c.pool} ${c.dimension} capacity ${c.from} → ${c.to}` }));
      g.append(m);
    }
    svg.append(g);
  }
  const now = Date.parse(cal.now);
  if (now >= t0 && now <= t1) {
    svg.append(el("line", { class: "now", x1: x(now), x2: x(now), y1: AXIS - 6, y2: H }));
    svg.append(el("text", { x: x(now) + 3, y: AXIS - 2, text: "now", fill: "#c9423a" }));
  }
  box.replaceChildren(svg);
  box.dataset.reservations = String(cal.reservations.length);
}

function zoom(factor, center) {
  const span = state.t1 - state.t0;
  const c = center === undefined ? state.t0 + span / 2 : center;
  const next = Math.min(366 * 24 * HOUR / 2, Math.max(15 * 60e3, span * factor));
  const k = (c - state.t0) / span;
  state.t0 = c - k * next;
  state.t1 = state.t0 + next;
  drawTimeline();
  scheduleCalendar();
}

// Throttled, not debounced: under a steady stream of changes the page still refreshes.
let refetch = null;
function scheduleCalendar() {
  if (refetch) return;
  refetch = setTimeout(() => { refetch = null; loadCalendar(); }, 250);
}

let replan = null;
function schedulePlans() {
  if (replan) return;
  replan = setTimeout(() => { replan = null; loadPlans(); }, 250);
}

function setupTimeline() {
  const box = $("timeline");
  $("tl-zoom-in").addEventListener("click", () => zoom(0.5));
  $("tl-zoom-out").addEventListener("click", () => zoom(2));
  $("tl-now").addEventListener("click", () => {
    const span = state.t1 - state.t0;
    state.t0 = Date.now() - span / 4;
    state.t1 = state.t0 + span;
    drawTimeline();
    scheduleCalendar();
  });
  $("tl-all").addEventListener("change", drawTimeline);
  $("tl-group").addEventListener("change", drawTimeline);
  for (const b of document.querySelectorAll("[data-span]")) {
    b.addEventListener("click", () => {
      const span = Number(b.dataset.span);
      state.t0 = Date.now() - span / 4;
      state.t1 = state.t0 + span;
      drawTimeline();
      scheduleCalendar();
    });
  }
  const timeAt = (clientX) => {
    const r = box.getBoundingClientRect();
    const W = Math.max(600, box.clientWidth || 1000);
    const frac = (clientX - r.left - TL_LABEL) / (W - TL_LABEL - 10);
    return state.t0 + Math.min(1, Math.max(0, frac)) * (state.t1 - state.t0);
  };
  box.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    zoom(ev.deltaY > 0 ? 1.25 : 0.8, timeAt(ev.clientX));
  }, { passive: false });
  let drag = null;
  // A press that does not move is a click (it selects a reservation); one that moves pans.
  box.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, t0: state.t0, t1: state.t1, id: ev.pointerId, moved: false };
  });
  box.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    if (!drag.moved) {
      if (Math.abs(ev.clientX - drag.x) < 4) return;
      drag.moved = true;
      box.classList.add("dragging");
      try { box.setPointerCapture(drag.id); } catch (_) { /* synthetic pointers have none */ }
    }
    const W = Math.max(600, box.clientWidth || 1000);
    const dt = ((ev.clientX - drag.x) / (W - TL_LABEL - 10)) * (drag.t1 - drag.t0);
    state.t0 = drag.t0 - dt;
    state.t1 = drag.t1 - dt;
    drawTimeline();
  });
  const end = () => {
    if (!drag) return;
    const moved = drag.moved;
    drag = null;
    box.classList.remove("dragging");
    if (moved) scheduleCalendar();
  };
  box.addEventListener("pointerup", end);
  box.addEventListener("pointercancel", end);
  window.addEventListener("resize", () => { drawTimeline(); drawUtilization(); });
}

function drawUtilization() {
  const cal = state.cal;
  if (!cal) return;
  const sel = $("ut-pool");
  // The busiest pools first: those are the ones worth a look.
  const count = new Map();
  for (const r of cal.reservations) count.set(r.pool, (count.get(r.pool) || 0) + 1);
  const busy = { has: (id) => count.has(id) };
  const ids = cal.pools.map((p) => p.id).sort((a, b) => ((count.get(b) || 0) - (count.get(a) || 0)) || (a < b ? -1 : 1));
  if (sel.options.length !== ids.length || [...sel.options].some((o, i) => o.value !== ids[i])) {
    sel.replaceChildren(...ids.map((id) => {
      const p = poolById(id), detail = poolDetail(p);
      return el("option", { value: id, title: poolTip(p), text: poolName(p) + (detail ? ` (${detail})` : "") + (busy.has(id) ? " •" : "") });
    }));
  }
  if (!state.pool || !ids.includes(state.pool)) state.pool = ids[0] || "";
  sel.value = state.pool;
  const out = $("utilization");
  const p = cal.pools.find((q) => q.id === state.pool);
  if (!p) { out.replaceChildren(el("p", { class: "empty", text: "No pools: give capacity with increase-capacity or an inventory." })); return; }
  const t0 = Date.parse(cal.from), t1 = Date.parse(cal.to);
  const plots = p.dimensions.map((dim) => plotDimension(p, dim, t0, t1, Date.parse(cal.now)));
  out.replaceChildren(...plots);
}

function plotDimension(p, dim, t0, t1, now) {
  const cols = Math.max(1, Math.floor(($("utilization").clientWidth || 1100) / 540));
  const W = Math.max(500, Math.floor(($("utilization").clientWidth || 1100) / cols) - 30), H = 200, L = 56, R = 10, T = 10, B = 24;
  const steps = p.timeline.map((s) => ({ t: Date.parse(s.at), l: s.levels[dim] || { total: 0, reserved: 0, usage: 0, available: 0 } }));
  // Over-committed (available below zero after a flagged decrease) is drawn below zero.
  let max = 1, min = 0;
  for (const s of steps) {
    max = Math.max(max, s.l.total, s.l.reserved, s.l.usage, s.l.available);
    min = Math.min(min, s.l.available);
  }
  const x = (t) => L + ((Math.min(Math.max(t, t0), t1) - t0) / (t1 - t0)) * (W - L - R);
  const y = (v) => T + (1 - (v - min) / (max - min)) * (H - T - B);
  const path = (f) => {
    let d = "";
    steps.forEach((s, i) => {
      const xs = x(s.t), xe = x(i + 1 < steps.length ? steps[i + 1].t : t1);
      d += `${i ? "L" : "M"}${xs},${y(f(s.l))} L${xe},${y(f(s.l))} `;
    });
    return d;
  };
  const area = (f) => (steps.length ? path(f) + `L${x(t1)},${y(0)} L${x(steps[0].t)},${y(0)} Z` : "");
  const svg = el("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, "data-dimension": dim, "data-min": min, "data-max": max });
  const ticks = new Set([0, min, max]);
  for (let i = 1; i < 4; i++) ticks.add(Math.round(min + ((max - min) * i) / 4));
  for (const v of [...ticks].sort((a, b) => a - b)) {
    svg.append(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#eef1f4" }));
    svg.append(el("text", { class: "tick", x: L - 4, y: y(v) + 3, "text-anchor": "end", text: v }));
  }
  if (min < 0) {
    svg.append(el("rect", { class: "overcommit", x: L, y: y(0), width: W - L - R, height: y(min) - y(0) }, el("title", { text: "over-committed: reservations hold more than the capacity" })));
  }
  svg.append(el("line", { class: "zero", x1: L, x2: W - R, y1: y(0), y2: y(0), "data-zero": "" }));
  for (let i = 1; i < 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    svg.append(el("text", { x: x(t), y: H - 6, "text-anchor": "middle", text: fmtTime(t, t1 - t0) }));
  }
  svg.append(el("text", { x: L, y: H - 6, text: fmtTime(t0, t1 - t0) }));
  svg.append(el("text", { x: W - R, y: H - 6, "text-anchor": "end", text: fmtTime(t1, t1 - t0) }));
  if (steps.length) {
    svg.append(el("path", { class: "area", d: area((l) => l.reserved) }, el("title", { text: "reserved" })));
    svg.append(el("path", { class: "used", d: area((l) => l.usage) }, el("title", { text: "allocated" })));
    svg.append(el("path", { class: "total", d: path((l) => l.total) }, el("title", { text: "capacity" })));
    svg.append(el("path", { class: "available", d: path((l) => l.available), "data-line": "available" }, el("title", { text: "available" })));
  }
  if (now > t0 && now < t1) svg.append(el("line", { x1: x(now), x2: x(now), y1: T, y2: H - B, stroke: "#c9423a", "stroke-dasharray": "4 3" }));
  const last = steps.filter((s) => s.t <= now).pop() || steps[0];
  const cur = last ? last.l : { total: 0, reserved: 0, usage: 0, available: 0 };
  return el("div", { class: "plot" },
    el("h3", { text: `${dim} — capacity ${cur.total}, reserved ${cur.reserved}, allocated ${cur.usage}, available ${cur.available} (now)` }),
    svg);
}

// ---- plans -------------------------------------------------------------------------------

async function loadPlans() {
  try {
    state.plans = await getJson("plans");
    drawPlans();
  } catch (e) {
    showError($("plans"), "cannot load plans: " + e.message);
  }
}

function drawPlans() {
  const box = $("plans");
  $("plans-empty").hidden = state.plans.length > 0;
  box.replaceChildren(...state.plans.map(planCard));
  box.dataset.count = String(state.plans.length);
}

function planCard(p) {
  const o = p.outcome || {};
  const card = el("article", { class: "plan", "data-plan-id": p.id, "data-status": p.status });
  card.append(el("h2", {}, el("span", { text: p.name }),
    el("span", { class: "badge " + p.status.replace(/ /g, "-"), text: p.status })));
  card.append(el("div", { class: "meta", text: `${p.id} · accepted ${p.created} · updated ${p.updated}` }));
  if (p.message) card.append(el("p", { text: p.message }));
  const sols = Array.isArray(o.solutions) ? o.solutions : [];
  if (sols.length) {
    const best = sols[0];
    const proof = o.optimal ? "proven optimal" : "best found, not proven optimal";
    const line = el("p", {}, el("strong", { text: "objective " }), el("span", { "data-objective": "", text: fmtNum(best.objective) }), el("span", { class: "meta", text: " · " + proof }));
    // The bound the search proved and the best plan's gap to it, as `berth solve` reports them.
    if (typeof o.bound === "number") {
      line.append(el("span", { class: "meta", text: " · bound " }), el("span", { "data-bound": "", text: fmtNum(o.bound) }));
    }
    if (typeof o.gap === "number") {
      line.append(el("span", { class: "meta", text: " · gap " }), el("span", { "data-gap": "", text: fmtGap(o.gap) }));
    }
    card.append(line);
    const table = el("table", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "demand" }),
      el("th", { text: "recommended candidate" }), el("th", { text: "location" }), el("th", { text: "objective" })));
    sols.forEach((s, i) => {
      for (const [demand, c] of Object.entries(s.placements || {})) {
        const where = [c.city, c.state, c.country].filter(Boolean).join(", ") || c.location_id || "";
        table.append(el("tr", { "data-recommendation": demand },
          el("td", { text: i + 1 }), el("td", { text: demand }),
          el("td", { text: c.candidate_id || c.instance_name || "?" }),
          el("td", { text: where }), el("td", { text: fmtNum(s.objective) })));
      }
    });
    card.append(table);
  }
  if (p.reservations && p.reservations.length) card.append(el("p", { class: "meta", text: "reservations: " + p.reservations.join(", ") }));
  if (o.map && (o.map.locations.length || o.map.candidates.length)) card.append(planMap(o.map));
  const triage = o.triage && typeof o.triage === "object" ? Object.entries(o.triage) : [];
  if (triage.length) {
    const det = el("details", { "data-triage": "" }, el("summary", { text: "triage: why candidates were removed" }));
    const t = el("table", {}, el("tr", {}, el("th", { text: "demand" }), el("th", { text: "candidates" }), el("th", { text: "removed (by constraint)" })));
    for (const [demand, tr] of triage) {
      const by = {};
      for (const [cand, why] of Object.entries(tr.removed || {})) (by[why] = by[why] || []).push(cand);
      const text = Object.entries(by).map(([why, c]) => `${why}: ${c.join(", ")}`).join("; ") || "none";
      t.append(el("tr", {}, el("td", { text: demand }), el("td", { text: tr.candidates }), el("td", { text })));
    }
    det.append(t);
    card.append(det);
  }
  if (o.stats) card.append(el("p", { class: "meta", text: `search: ${o.stats.nodes} nodes, ${o.stats.elapsed_ms} ms` }));
  if (canWrite()) card.append(el("p", { class: "actions" }, el("button", { type: "button", class: "act danger", "data-delete-plan": p.id, text: "Delete plan" })));
  return card;
}

// Colours of the triage's reasons on the map, in the order the reasons are first met.
const REASON_COLOURS = ["#c9423a", "#e39b1a", "#7a4fc9", "#b5487f", "#8a5a00", "#3b9bb5"];

// A plan's points on the bundled world outline (world.js): customer locations, the chosen
// candidates, and the removed ones coloured by the constraint that removed them. The view
// is the points' box with a margin, 2:1 like the projection.
function planMap(m) {
  const px = (lon, lat) => [(lon + 180) * 2, (90 - lat) * 2];
  const pts = [...m.locations, ...m.candidates].map((q) => px(q.longitude, q.latitude));
  let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of pts) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
  let w = Math.max(80, (x1 - x0) * 1.4), h = Math.max(40, (y1 - y0) * 1.4);
  if (w > 2 * h) h = w / 2; else w = 2 * h;
  w = Math.min(w, WORLD.width); h = Math.min(h, WORLD.height);
  const vx = Math.min(Math.max(0, (x0 + x1) / 2 - w / 2), WORLD.width - w);
  const vy = Math.min(Math.max(0, (y0 + y1) / 2 - h / 2), WORLD.height - h);
  const r = w / 80;
  const svg = el("svg", { class: "map", "data-map": "", viewBox: `${vx} ${vy} ${w} ${h}`, width: 480, height: 240, preserveAspectRatio: "xMidYMid meet" });
  svg.append(el("rect", { class: "sea", x: 0, y: 0, width: WORLD.width, height: WORLD.height }));
  svg.append(el("path", { class: "land", d: WORLD.path, "stroke-width": w / 600 }));
  const reasons = [];
  for (const c of m.candidates) if (c.removed && !reasons.includes(c.removed)) reasons.push(c.removed);
  const colour = (why) => REASON_COLOURS[reasons.indexOf(why) % REASON_COLOURS.length];
  // Removed first, so the chosen ones and the customers are drawn on top.
  const order = [...m.candidates].sort((a, b) => Number(a.chosen) - Number(b.chosen));
  for (const c of order) {
    const [cx, cy] = px(c.longitude, c.latitude);
    const dot = el("circle", {
      cx, cy, r: c.chosen ? r * 1.3 : r, "stroke-width": r / 3,
      class: "map-candidate " + (c.chosen ? "chosen" : "removed"),
      fill: c.chosen ? undefined : colour(c.removed),
      "data-candidate": c.id, "data-demand": c.demand, "data-reason": c.removed || undefined,
    });
    dot.append(el("title", { text: `${c.id} (${c.demand}): ${c.chosen ? "chosen" : "removed by " + c.removed} · ${c.latitude}, ${c.longitude}` }));
    svg.append(dot);
  }
  for (const l of m.locations) {
    const [cx, cy] = px(l.longitude, l.latitude);
    const dot = el("circle", { cx, cy, r: r * 0.9, "stroke-width": r / 2, class: "map-location", "data-location": l.name });
    dot.append(el("title", { text: `${l.name} (location) · ${l.latitude}, ${l.longitude}` }));
    svg.append(dot);
  }
  const legend = el("div", { class: "map-legend" },
    el("span", { class: "key loc", text: "location" }),
    el("span", { class: "key chosen", text: "chosen" }),
    // Colours as SVG attributes: the page's CSP allows no inline styles.
    ...reasons.map((why) => el("span", { class: "key why", "data-reason": why },
      el("svg", { width: 10, height: 10 }, el("circle", { cx: 5, cy: 5, r: 4, fill: colour(why) })), "removed by " + why)));
  return el("figure", { class: "plan-map" }, svg, legend);
}

function fmtNum(v) {
  return typeof v === "number" ? (Math.round(v * 1000) / 1000).toString() : String(v ?? "");
}

// A relative gap as a percentage, small ones with their digits (berth_engine::fmt_gap).
function fmtGap(g) {
  if (g === 0) return "0%";
  const pct = g * 100;
  const s = pct >= 10 ? pct.toFixed(1) : pct >= 0.01 ? pct.toFixed(3) : pct.toExponential(2);
  return (s.includes("e") ? s : s.replace(/\.?0+$/, "")) + "%";
}

// ---- racks -------------------------------------------------------------------------------

async function loadSite() {
  if (state.site) return;
  try {
    state.site = await getJson("place");
    $("rk-site").textContent = `Topology: ${state.site.source} — levels ${state.site.levels.join(" > ")}, ${state.site.leaves} leaves. Placements here are previews: nothing is stored.`;
    if (!$("rk-template").value) $("rk-template").value = state.site.example;
  } catch (e) {
    $("rk-site").textContent = "No topology: " + e.message;
  }
}

let svgUrl = null;
async function place() {
  const status = $("rk-status");
  const out = $("rk-result");
  status.textContent = "placing…";
  try {
    const res = await getJson("place", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ template: $("rk-template").value, objective: $("rk-objective").value, time_limit_ms: 1000 }),
    });
    const pl = res.placement;
    status.textContent = `${res.status}${pl.optimal ? " (optimal)" : ""} · objective ${pl.objective} · hosts used ${pl.hosts_used}`;
    if (svgUrl) URL.revokeObjectURL(svgUrl);
    svgUrl = URL.createObjectURL(new Blob([res.svg], { type: "image/svg+xml" }));
    const img = el("img", { src: svgUrl, alt: "rack diagram", "data-testid": "rack-svg" });
    const table = el("table", {}, el("tr", {}, el("th", { text: "resource" }), el("th", { text: "leaf" })));
    for (const [k, v] of Object.entries(pl.placements || {})) table.append(el("tr", {}, el("td", { text: k }), el("td", { text: typeof v === "string" ? v : JSON.stringify(v) })));
    out.replaceChildren(img, table);
    out.dataset.status = res.status;
  } catch (e) {
    status.textContent = "";
    const diags = (e.body && e.body.diagnostics) || [];
    showError(out, e.message + diags.map((d) => `\n${d.path} (${d.line}:${d.column}): ${d.message}`).join(""));
    out.dataset.status = "error";
  }
}

// ---- live updates ------------------------------------------------------------------------

function connect() {
  const live = $("live");
  const es = new EventSource(apiUrl("events"));
  const on = (v) => {
    live.textContent = v ? "live" : "reconnecting";
    live.className = "live " + (v ? "on" : "off");
    document.body.dataset.live = v ? "on" : "off";
  };
  es.addEventListener("ready", () => { on(true); refresh(); });
  es.addEventListener("calendar", () => { if (state.view === "timeline" || state.view === "utilization") scheduleCalendar(); });
  es.addEventListener("plan", () => { if (state.view === "plans") schedulePlans(); });
  es.addEventListener("lagged", refresh);
  es.onerror = () => on(false);
}

function refresh() {
  if (state.view === "timeline" || state.view === "utilization") scheduleCalendar();
  if (state.view === "plans") schedulePlans();
}

document.addEventListener("DOMContentLoaded", () => {
  setupTimeline();
  $("ut-pool").addEventListener("change", (ev) => { state.pool = ev.target.value; drawUtilization(); });
  $("rk-place").addEventListener("click", place);
  window.addEventListener("hashchange", () => show(location.hash.slice(1)));
  show(location.hash.slice(1));
  connect();
});
