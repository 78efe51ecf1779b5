// Berth console actions: create a reservation (with the offers when it does not fit), change
// or cancel one, submit or delete a plan. Each goes to the API's own route (Promise, HAS) with
// the page's credentials. Only writers see the buttons (GET /ui/api/session says who may);
// the API refuses readers anyway (403). Uses app.js's helpers ($, el, state, poolById, …).
"use strict";

const acts = { access: "read", reselect: null };

// Promise's names of the dimensions the calendar names canonically (offers use Promise's).
const PROMISE_NAME = { vcpu: "cores", ram_mib: "ram", disk_gib: "gigabytes" };

const SAMPLE_PLAN = `homing_template_version: 2017-10-10
locations:
  customer: {latitude: 32.8, longitude: -96.8}
demands:
  vG: [{inventory_provider: aai, inventory_type: cloud}]
constraints:
  near_customer:
    type: distance_to_location
    demands: [vG]
    properties: {distance: < 500 km, location: customer}
optimization:
  minimize: {sum: [{distance_between: [customer, vG]}]}
`;

function canWrite() { return acts.access === "write" || acts.access === "admin"; }

async function loadSession() {
  try {
    acts.access = (await getJson("session")).access;
  } catch (_) {
    acts.access = "read";
  }
  document.body.dataset.access = acts.access;
  for (const b of document.querySelectorAll("#act-new-res, #act-new-plan, #rf-submit, #pf-submit")) b.hidden = !canWrite();
  if (state.plans.length) drawPlans();
}

// A call to an API route outside /ui/api/: JSON in and out, whatever the status.
async function callApi(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(location.origin + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let v = null;
  try { v = text ? JSON.parse(text) : null; } catch (_) { v = null; }
  return { status: r.status, ok: r.ok, body: v };
}

// The route's own words: Promise `message`, problem `detail`, HAS `error_message`.
function errorText(res) {
  const b = res.body || {};
  const em = b.error_message;
  const has = em && (em.explanation || (em.error && em.error.message));
  return `${res.status}: ${b.message || b.detail || has || b.title || "request failed"}`;
}

function say(id, text, kind) {
  const s = $(id);
  s.textContent = text;
  s.className = "status " + (kind || "");
  s.dataset.kind = kind || "busy";
}

function toLocalInput(v) {
  if (v === null || v === undefined || v === "") return "";
  const ms = typeof v === "number" ? v : Date.parse(v);
  return new Date(ms - new Date(ms).getTimezoneOffset() * 60e3).toISOString().slice(0, 16);
}

function fromLocalInput(v) { return v ? new Date(v).toISOString() : undefined; }

function amountInputs(box, dims, values) {
  box.replaceChildren(...dims.map((d) => el("label", {}, d + " ",
    el("input", { type: "number", min: 0, step: 1, "data-dimension": d, value: values && values[d] !== undefined ? values[d] : "" }))));
}

function readAmounts(box) {
  const out = {};
  for (const i of box.querySelectorAll("input[data-dimension]")) {
    if (i.value !== "" && Number(i.value) > 0) out[i.dataset.dimension] = Number(i.value);
  }
  return out;
}

// ---- new reservation --------------------------------------------------------------------

function openReservationForm() {
  const cal = state.cal;
  if (!cal) return;
  const sel = $("rf-pool");
  const keep = sel.value;
  sel.replaceChildren(...cal.pools.map((p) => el("option", { value: p.id, title: poolTip(p), text: poolName(p) })));
  sel.value = cal.pools.some((p) => p.id === keep) ? keep : (state.pool || (cal.pools[0] && cal.pools[0].id) || "");
  if (!$("rf-end").value) $("rf-end").value = toLocalInput(Date.now() + 24 * HOUR);
  amountInputs($("rf-amounts"), poolById(sel.value).dimensions || [], null);
  $("rf-offers").replaceChildren();
  say("rf-status", "");
  $("res-form").hidden = false;
}

async function submitReservation(ev) {
  ev.preventDefault();
  if (!canWrite()) return;
  const p = poolById($("rf-pool").value);
  const capacity = readAmounts($("rf-amounts"));
  if (!Object.keys(capacity).length) { say("rf-status", "give at least one amount", "error"); return; }
  const body = { zone: p.zone, provider: p.provider, capacity, priority: $("rf-priority").value };
  const start = fromLocalInput($("rf-start").value), end = fromLocalInput($("rf-end").value);
  if (start) body.start = start;
  if (end) body.end = end;
  say("rf-status", "reserving…");
  $("rf-offers").replaceChildren();
  const res = await callApi("POST", "/create-reservation", body);
  if (res.ok) {
    const id = res.body["reservation-id"];
    say("rf-status", `reserved ${id}`, "ok");
    $("rf-status").dataset.reservation = id;
    scheduleCalendar();
    return;
  }
  say("rf-status", errorText(res), "error");
  drawOffers(res.body && res.body.offers, body);
}

// A conflict's offers: per pool, the most that fits over the window and the earliest start
// where all of it does; each can be taken into the form.
function drawOffers(offers, body) {
  const box = $("rf-offers");
  if (!Array.isArray(offers) || !offers.length) { box.replaceChildren(); return; }
  const list = el("ul", { class: "offers" });
  for (const o of offers) {
    const pool = typeof o.pool === "string" ? o.pool : `${o.pool.zone}/${o.pool.provider}`;
    const p = poolById(pool);
    const max = amountsText(o.max_reservable) || "nothing";
    const li = el("li", { "data-offer-pool": pool, "data-earliest": o.earliest_start },
      el("strong", { text: poolName(p) }),
      el("span", { "data-offer-max": "", text: ` at most ${max} over the window` }),
      el("span", { text: o.earliest_start ? `; all of it from ${o.earliest_start}` : "; never all of it" }));
    const take = el("button", { type: "button", "data-offer": "max", text: "take at most" });
    take.addEventListener("click", () => {
      $("rf-pool").value = pool;
      const dims = poolById(pool).dimensions || [];
      const v = {};
      for (const d of dims) {
        const q = o.max_reservable[d] ?? o.max_reservable[PROMISE_NAME[d]];
        if (q !== undefined && body.capacity[d] !== undefined) v[d] = q;
      }
      amountInputs($("rf-amounts"), dims, v);
    });
    li.append(" ", take);
    if (o.earliest_start) {
      const later = el("button", { type: "button", "data-offer": "later", text: "start then" });
      later.addEventListener("click", () => {
        // The form holds whole minutes: round up, never to before the offer.
        const s = Math.ceil(Date.parse(o.earliest_start) / 60e3) * 60e3;
        if (body.end) {
          const len = Date.parse(body.end) - Date.parse(body.start || state.cal.now);
          $("rf-end").value = toLocalInput(s + len);
        }
        $("rf-pool").value = pool;
        $("rf-start").value = toLocalInput(s);
      });
      li.append(" ", later);
    }
    list.append(li);
  }
  box.replaceChildren(el("p", { class: "hint", text: "It does not fit. Offers:" }), list);
  box.dataset.count = String(offers.length);
}

// ---- a reservation's panel ---------------------------------------------------------------

function selectReservation(id) {
  const r = state.cal && state.cal.reservations.find((x) => x.id === id);
  const box = $("res-panel");
  if (!r) { box.hidden = true; delete box.dataset.reservation; return; }
  const p = poolById(r.pool);
  const close = el("button", { type: "button", class: "close", text: "Close" });
  close.addEventListener("click", () => { box.hidden = true; delete box.dataset.reservation; });
  const kids = [
    el("h3", { text: `Reservation ${r.id} · ${poolName(p)}` }),
    el("p", { class: "meta", "data-summary": "", text: `${r.state}, priority ${r.priority}${r.tenant ? ", tenant " + r.tenant : ""} · ${r.start} → ${r.end || "open"} · reserved ${amountsText(r.amounts)} · allocated ${amountsText(r.allocated) || "nothing"}` }),
  ];
  const live = r.state === "initialized" || r.state === "active";
  if (canWrite() && live) {
    const fields = el("div", { class: "fields" },
      el("label", {}, "End ", el("input", { type: "datetime-local", id: "rp-end", value: toLocalInput(r.end) })),
      el("label", {}, "Priority ", el("select", { id: "rp-priority" },
        ...["low", "normal", "high"].map((v) => el("option", { value: v, text: v, selected: v === r.priority })))));
    const amounts = el("div", { class: "fields", id: "rp-amounts" });
    amountInputs(amounts, Object.keys(r.amounts), r.amounts);
    const save = el("button", { type: "button", class: "act primary", id: "rp-save", text: "Save changes" });
    save.addEventListener("click", () => saveReservation(r));
    const cancel = el("button", { type: "button", class: "act danger", id: "rp-cancel", text: "Cancel reservation" });
    cancel.addEventListener("click", () => armed(cancel, "Really cancel?", () => cancelReservation(r)));
    kids.push(fields, amounts, el("div", { class: "buttons" }, save, cancel, close, el("span", { id: "rp-status", class: "status" })));
  } else {
    kids.push(el("div", { class: "buttons" }, close));
  }
  box.replaceChildren(...kids);
  box.dataset.reservation = r.id;
  box.hidden = false;
}

// Destructive buttons ask once more: the first press arms them for five seconds.
function armed(button, text, run) {
  if (button.dataset.armed) { delete button.dataset.armed; run(); return; }
  const was = button.textContent;
  button.dataset.armed = "1";
  button.textContent = text;
  setTimeout(() => { if (button.dataset.armed) { delete button.dataset.armed; button.textContent = was; } }, 5000);
}

async function saveReservation(r) {
  const body = { "reservation-id": r.id };
  const end = fromLocalInput($("rp-end").value);
  if (end && (!r.end || Date.parse(end) !== Date.parse(r.end))) body.end = end;
  const capacity = readAmounts($("rp-amounts"));
  if (JSON.stringify(capacity) !== JSON.stringify(r.amounts)) body.capacity = capacity;
  if ($("rp-priority").value !== r.priority) body.priority = $("rp-priority").value;
  if (Object.keys(body).length === 1) { say("rp-status", "nothing changed", "error"); return; }
  say("rp-status", "saving…");
  const res = await callApi("POST", "/update-reservation", body);
  if (!res.ok) {
    const offers = (res.body && res.body.offers) || [];
    say("rp-status", errorText(res) + offers.map((o) => `\noffer: at most ${amountsText(o.max_reservable)}${o.earliest_start ? ", all from " + o.earliest_start : ""}`).join(""), "error");
    return;
  }
  say("rp-status", "updated", "ok");
  acts.reselect = r.id;
  scheduleCalendar();
}

async function cancelReservation(r) {
  say("rp-status", "cancelling…");
  const res = await callApi("POST", "/cancel-reservation", { "reservation-id": r.id });
  if (!res.ok) { say("rp-status", errorText(res), "error"); return; }
  say("rp-status", "cancelled", "ok");
  acts.reselect = r.id;
  scheduleCalendar();
}

// After each calendar load: an open panel shows the reservation as it now is.
function afterCalendar() {
  if (!acts.reselect) return;
  const id = acts.reselect;
  const text = $("rp-status") ? $("rp-status").textContent : "";
  acts.reselect = null;
  selectReservation(id);
  if (text && $("rp-status")) say("rp-status", text, "ok");
}

// ---- plans -------------------------------------------------------------------------------

async function submitPlan(ev) {
  ev.preventDefault();
  if (!canWrite()) return;
  const body = {
    name: $("pf-name").value,
    template: $("pf-template").value,
    num_solution: String(Number($("pf-num").value) || 1),
    timeout: Number($("pf-timeout").value) || 30,
  };
  say("pf-status", "submitting…");
  const res = await callApi("POST", "/v1/plans", body);
  if (!res.ok) { say("pf-status", errorText(res), "error"); return; }
  say("pf-status", `accepted ${res.body.id}`, "ok");
  $("pf-status").dataset.plan = res.body.id;
  schedulePlans();
}

async function deletePlan(button) {
  const id = button.dataset.deletePlan;
  const res = await callApi("DELETE", `/v1/plans/${encodeURIComponent(id)}`);
  const card = button.closest("[data-plan-id]");
  if (!res.ok) {
    card.append(el("div", { class: "error-box", text: "cannot delete: " + errorText(res) }));
    return;
  }
  card.remove();
  schedulePlans();
}

document.addEventListener("DOMContentLoaded", () => {
  $("act-new-res").addEventListener("click", openReservationForm);
  $("rf-pool").addEventListener("change", () => amountInputs($("rf-amounts"), poolById($("rf-pool").value).dimensions || [], readAmounts($("rf-amounts"))));
  $("res-form").addEventListener("submit", submitReservation);
  $("rf-close").addEventListener("click", () => { $("res-form").hidden = true; });
  $("timeline").addEventListener("click", (ev) => {
    const bar = ev.target.closest && ev.target.closest("[data-reservation-id]");
    if (bar) selectReservation(bar.dataset.reservationId);
  });
  $("act-new-plan").addEventListener("click", () => {
    if (!$("pf-template").value) $("pf-template").value = SAMPLE_PLAN;
    $("plan-form").hidden = false;
  });
  $("plan-form").addEventListener("submit", submitPlan);
  $("pf-close").addEventListener("click", () => { $("plan-form").hidden = true; });
  $("plans").addEventListener("click", (ev) => {
    const b = ev.target.closest && ev.target.closest("[data-delete-plan]");
    if (b) armed(b, "Really delete?", () => deletePlan(b));
  });
  loadSession();
});
