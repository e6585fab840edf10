// hivemem dashboard front end: small enhancements over server-rendered
// pages (live events, condense preview and apply, backup diff and restore,
// settings). Memory text is untrusted, so this file never assigns HTML:
// every value reaches the page through textContent or DOM nodes it builds.
'use strict';

(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

  // el builds an element; string children become text nodes.
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids.flat()) {
      if (kid !== undefined && kid !== null && kid !== false) e.append(kid);
    }
    return e;
  }

  // api calls the JSON API; errors carry the server's message.
  async function api(method, path, body) {
    const opt = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin' };
    if (body !== undefined) {
      opt.headers['Content-Type'] = 'application/json';
      opt.body = JSON.stringify(body);
    }
    const res = await fetch(path, opt);
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    if (res.status === 401) {
      location.href = '/login?next=' + encodeURIComponent(location.pathname + location.search);
      throw new Error('unauthorized');
    }
    if (!res.ok) throw new Error((data && data.error) || (res.status + ' ' + res.statusText));
    return data;
  }

  function humanBytes(n) {
    if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MiB';
    if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' KiB';
    return n + ' B';
  }

  // relTime mirrors relTime in internal/web/words.go: "just now",
  // "3 minutes ago", "in 2 hours", a date past 45 days.
  function relTime(iso) {
    const t = Date.parse(iso);
    if (!iso || Number.isNaN(t)) return '';
    const ms = Date.now() - t;
    const future = ms < 0;
    const s = Math.floor(Math.abs(ms) / 1000);
    if (s < 10) return future ? 'in a moment' : 'just now';
    const n = (k, noun) => k + ' ' + noun + (k === 1 ? '' : 's');
    let v;
    if (s < 60) v = n(s, 'second');
    else if (s < 3600) v = n(Math.floor(s / 60), 'minute');
    else if (s < 86400) v = n(Math.floor(s / 3600), 'hour');
    else if (s < 86400 * 45) v = n(Math.floor(s / 86400), 'day');
    else return new Date(t).toISOString().slice(0, 10);
    return future ? 'in ' + v : v + ' ago';
  }

  // upgradeTimes shows <time datetime> as relative times, the absolute
  // time in the tooltip.
  function upgradeTimes(root = document) {
    for (const t of $$('time[datetime]', root)) {
      const iso = t.getAttribute('datetime');
      if (!iso) continue;
      if (!t.title) t.title = t.textContent.trim();
      t.textContent = relTime(iso);
    }
  }

  function alertBox(kind, ...kids) {
    return el('div', { class: 'alert ' + kind, role: kind === 'bad' ? 'alert' : 'status' }, ...kids);
  }

  // renderDiff shows a unified diff, one classed line per row.
  function renderDiff(pre, text) {
    pre.replaceChildren();
    if (!text) {
      pre.append(el('span', { class: 'dl same' }, 'No differences: the files are identical.'));
      return { add: 0, del: 0 };
    }
    let add = 0, del = 0;
    const lines = text.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) {
      let cls = 'ctx';
      if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ')) cls = 'meta';
      else if (line.startsWith('@@')) cls = 'hunk';
      else if (line.startsWith('+')) { cls = 'add'; add++; }
      else if (line.startsWith('-')) { cls = 'del'; del++; }
      pre.append(el('span', { class: 'dl ' + cls }, line + '\n'));
    }
    return { add, del };
  }

  // liveTimeline keeps a timeline list up to date from the event stream;
  // EventSource resumes from the last event id after a reconnect. The
  // server renders the events (as sentences): on news, the page is fetched
  // again and the list and the other selectors swapped in.
  function liveTimeline(list, also = []) {
    if (!list || !window.EventSource) return;
    const live = $('#live');
    const es = new EventSource(list.dataset.stream);
    es.onopen = () => { if (live) { live.hidden = false; live.classList.remove('off'); } };
    es.onerror = () => { if (live) live.classList.add('off'); };
    const refresh = debounce(() => refreshFragments(['#' + list.id, ...also]).catch(() => {}), 300);
    es.onmessage = () => refresh();
    window.addEventListener('pagehide', () => es.close());
  }

  // refreshFragments re-fetches this page and swaps in the fresh copy of
  // each selected element, so server-rendered parts stay the single source
  // of markup. A timeline keeps its element (its stream stays open): its
  // rows are swapped, the new ones marked fresh.
  async function refreshFragments(sels) {
    const res = await fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    for (const sel of sels) {
      const fresh = doc.querySelector(sel);
      const cur = $(sel);
      if (!fresh || !cur) continue;
      if (cur.classList.contains('timeline')) {
        const seen = new Set($$('.event', cur).map((e) => e.dataset.offset));
        const rows = Array.from(fresh.children).map((e) => document.importNode(e, true));
        for (const r of rows) if (r.dataset.offset && !seen.has(r.dataset.offset)) r.classList.add('fresh');
        cur.replaceChildren(...rows);
        upgradeTimes(cur);
      } else {
        cur.replaceWith(document.importNode(fresh, true));
        upgradeTimes($(sel));
      }
    }
  }

  const refreshFragment = (sel) => refreshFragments([sel]);

  function debounce(fn, ms) {
    let t;
    return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
  }

  const pages = {
    overview() {
      liveTimeline($('#timeline'), ['#agents', '#manager']);
      setInterval(() => refreshFragments(['#agents', '#manager']).catch(() => {}), 60000);
    },

    events() {
      liveTimeline($('#timeline'));
    },

    memory() {
      // Bring the hit into view when the link had no line anchor, and
      // scroll the contents to its section.
      if (!location.hash) {
        const hit = $('.doc .hit');
        if (hit) hit.scrollIntoView({ block: 'center' });
      }
      const toc = $('.toc');
      const cur = $('.toc a.hit');
      if (toc && cur && toc.scrollHeight > toc.clientHeight) {
        toc.scrollTop = Math.max(0, cur.offsetTop - toc.offsetTop - toc.clientHeight / 2);
      }
    },

    condense() {
      const box = $('#condense');
      const agent = box.dataset.agent;
      const preview = $('#preview'), apply = $('#apply'), busy = $('#busy'), out = $('#condense-result');
      let previewSha = '';
      const setBusy = (on) => { busy.hidden = !on; preview.disabled = on; if (on) apply.disabled = true; };
      const url = '/api/v1/agents/' + encodeURIComponent(agent) + '/condense';

      preview.addEventListener('click', async () => {
        setBusy(true);
        out.replaceChildren();
        try {
          const r = await api('POST', url, { dry_run: true, force: $('#force').checked });
          if (r.status !== 'dry-run') {
            out.append(alertBox('warn', 'Nothing to condense: ' + (r.message || r.reason || r.status) + '.'));
            $('#preview-panel').hidden = true;
            return;
          }
          previewSha = r.before_sha256;
          const saved = r.old_bytes - r.new_bytes;
          out.append(alertBox('info',
            el('strong', {}, humanBytes(r.old_bytes) + ' → ' + humanBytes(r.new_bytes)),
            ` (−${humanBytes(saved)}): evict ${r.evicted} section${r.evicted === 1 ? '' : 's'} to the archive, keep ${r.kept}, hoist ${r.hoisted} pinned fact${r.hoisted === 1 ? '' : 's'}. Summariser: ${r.summarizer}. Nothing is written until you apply.`));
          const st = renderDiff($('#diff'), r.diff);
          $('#output').textContent = r.output;
          $('#preview-panel').hidden = false;
          $('#preview-panel').dataset.adds = st.add;
          apply.disabled = false;
        } catch (e) {
          out.append(alertBox('bad', 'Preview failed: ' + e.message));
        } finally {
          busy.hidden = true;
          preview.disabled = false;
        }
      });

      apply.addEventListener('click', async () => {
        setBusy(true);
        out.replaceChildren();
        try {
          const r = await api('POST', url, { force: $('#force').checked, if_match: previewSha });
          if (r.status === 'condensed') {
            out.append(alertBox('ok',
              el('strong', {}, 'Condensed: '), `${humanBytes(r.old_bytes)} → ${humanBytes(r.new_bytes)}. The previous file is backup `,
              el('code', {}, r.backup), '. ',
              el('a', { href: '/agents/' + encodeURIComponent(agent) }, 'View the memory'), ' · ',
              el('a', { href: '/agents/' + encodeURIComponent(agent) + '/backups' }, 'Backups')));
            if (r.mine_error) out.append(alertBox('warn', 'Re-indexing reported: ' + r.mine_error));
            $('#preview-panel').hidden = true;
            previewSha = '';
          } else {
            out.append(alertBox(r.status === 'aborted' ? 'bad' : 'warn',
              `Not condensed (${r.status}${r.reason ? ': ' + r.reason : ''}). ${r.message || ''}`));
          }
        } catch (e) {
          out.append(alertBox('bad', 'Condensation failed: ' + e.message));
        } finally {
          busy.hidden = true;
          preview.disabled = false;
          apply.disabled = true;
        }
      });

      for (const tab of $$('.tab')) {
        tab.addEventListener('click', () => {
          for (const t of $$('.tab')) t.setAttribute('aria-selected', String(t === tab));
          for (const p of $$('.tabpanel')) p.hidden = p.dataset.panel !== tab.dataset.tab;
        });
      }
    },

    backups() {
      const box = $('#backups');
      const agent = box.dataset.agent;
      const result = $('#backup-result');
      const dlg = $('#confirm-restore');
      const base = '/api/v1/agents/' + encodeURIComponent(agent) + '/backups/';

      async function showDiff(name) {
        const panel = $('#diff-panel');
        try {
          const d = await api('GET', base + encodeURIComponent(name));
          $('#diff-title').textContent = 'Restoring ' + name + ' would change';
          $('#diff-note').textContent = d.identical
            ? 'This backup is identical to the current file.'
            : `Lines marked − are in the current file only; + are in the backup only (${humanBytes(d.size)}).`;
          renderDiff($('#diff'), d.diff);
          panel.hidden = false;
          panel.scrollIntoView({ block: 'start', behavior: 'smooth' });
        } catch (e) {
          result.replaceChildren(alertBox('bad', 'Cannot load the diff: ' + e.message));
        }
      }

      async function restore(name) {
        result.replaceChildren();
        try {
          const r = await api('POST', base + encodeURIComponent(name) + '/restore', {});
          const msg = r.unchanged
            ? [`${agent} already matches backup `, el('code', {}, r.backup), '; nothing changed.']
            : ['Restored ', el('strong', {}, agent), ' from ', el('code', {}, r.backup), ` (${humanBytes(r.old_bytes)} → ${humanBytes(r.new_bytes)}).`,
              r.pre_restore_backup ? [' The replaced file is backup ', el('code', {}, r.pre_restore_backup), '.'] : ''];
          await refreshFragment('#backup-list');
          result.replaceChildren(alertBox('ok', ...msg, ' ', el('a', { href: '/agents/' + encodeURIComponent(agent) }, 'View the memory')));
          if (r.mine_error) result.append(alertBox('warn', 'Re-indexing reported: ' + r.mine_error));
          $('#diff-panel').hidden = true;
        } catch (e) {
          result.replaceChildren(alertBox('bad', 'Restore failed: ' + e.message));
        }
      }

      box.addEventListener('click', (ev) => {
        const b = ev.target.closest('button[data-backup]');
        if (!b) return;
        const name = b.dataset.backup;
        if (b.classList.contains('act-diff')) showDiff(name);
        if (b.classList.contains('act-restore')) {
          $('#confirm-name').textContent = name;
          dlg.dataset.backup = name;
          dlg.returnValue = '';
          dlg.showModal();
        }
      });
      dlg.addEventListener('close', () => {
        if (dlg.returnValue === 'restore' && dlg.dataset.backup) restore(dlg.dataset.backup);
      });
    },

    settings() {
      const form = $('#settings-form');
      const out = $('#settings-result');
      const ints = ['budget_bytes', 'byte_trigger_pct', 'section_trigger', 'min_bytes', 'recent_keep', 'retention', 'word_budget'];
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        out.replaceChildren();
        const patch = { enabled: form.elements.enabled.checked, interval: form.elements.interval.value.trim() };
        for (const k of ints) {
          const v = form.elements[k].value.trim();
          if (!/^\d+$/.test(v)) {
            out.append(alertBox('bad', `${k.replace(/_/g, ' ')}: want a whole number`));
            form.elements[k].focus();
            return;
          }
          patch[k] = Number(v);
        }
        $('#save').disabled = true;
        try {
          const mining = form.elements.mining;
          const body = { reflector: patch };
          if (mining.checked !== mining.defaultChecked) body.manager = { mining: mining.checked };
          const r = await api('PATCH', '/api/v1/settings', body);
          mining.defaultChecked = mining.checked;
          out.append(alertBox('ok', 'Saved to ' + r.config_path + '.'));
          for (const w of r.warnings || []) out.append(alertBox('warn', w));
        } catch (e) {
          out.append(alertBox('bad', 'Not saved: ' + e.message));
        } finally {
          $('#save').disabled = false;
        }
      });
    },
  };

  // "Mine now" buttons: data-mine is the agent ("" for the whole hive);
  // data-mine-result selects where the outcome is shown.
  function mineButtons() {
    for (const b of document.querySelectorAll('button[data-mine]')) {
      b.addEventListener('click', async () => {
        const out = $(b.dataset.mineResult);
        out.replaceChildren();
        b.disabled = true;
        try {
          const agent = b.dataset.mine;
          const r = await api('POST', '/api/v1/mine', agent ? { agent } : {});
          const rep = r.report;
          out.append(alertBox('ok', `Mined ${rep.files} file${rep.files === 1 ? '' : 's'}: ${rep.changed} changed, +${rep.drawers_added} −${rep.drawers_removed} drawers.`));
        } catch (e) {
          out.append(alertBox('bad', 'Not mined: ' + e.message));
        } finally {
          b.disabled = false;
        }
      });
    }
  }

  // Corrections in the memory viewer: supersede, forget and purge a
  // section, each after a confirmation (a purge asks to type the agent id).
  function correctButtons() {
    const dlg = $('#correct-dialog');
    if (!dlg) return;
    const agent = dlg.dataset.agent;
    const out = $('#correct-result');
    const texts = {
      supersede: ['Supersede this section?', 'The new note is appended with today\'s date; this section stays in the file, marked "superseded by", and leaves search.', 'Supersede'],
      forget: ['Forget this section?', 'It leaves the memory file (backed up first) and search; its text is kept in hive/forgotten.', 'Forget'],
      purge: ['Purge this section?', 'For a secret pasted by mistake: the section, its lines and any key in it leave every file of the home (every agent\'s copy, archives, backups, sessions, the event log) and the index, for good.', 'Purge'],
    };
    let action = '', heading = '';
    for (const b of $$('.section-actions button')) {
      b.addEventListener('click', () => {
        action = b.classList.contains('act-supersede') ? 'supersede' : b.classList.contains('act-purge') ? 'purge' : 'forget';
        heading = b.parentElement.dataset.heading;
        const [title, note, go] = texts[action];
        $('#correct-title').textContent = title;
        $('#correct-heading').textContent = heading;
        $('#correct-note').textContent = note;
        $('#correct-go').textContent = go;
        $('#correct-text-label').hidden = action !== 'supersede';
        $('#correct-confirm-label').hidden = action !== 'purge';
        $('#correct-text').value = '';
        $('#correct-confirm').value = '';
        dlg.returnValue = '';
        dlg.showModal();
      });
    }
    dlg.addEventListener('close', async () => {
      if (dlg.returnValue !== 'go') return;
      out.replaceChildren();
      const base = '/api/v1/agents/' + encodeURIComponent(agent);
      try {
        if (action === 'supersede') {
          const text = $('#correct-text').value;
          if (!text.trim()) throw new Error('the new note is empty');
          const r = await api('POST', base + '/remember', { text, supersedes: heading });
          if (r.duplicate) {
            out.append(alertBox('warn', `Not written: it repeats "${r.duplicate.heading || r.duplicate.text}".`));
            return;
          }
        } else if (action === 'forget') {
          await api('POST', base + '/forget', { heading });
        } else {
          const confirm = $('#correct-confirm').value.trim();
          if (confirm !== agent) throw new Error('type the agent id to purge');
          await api('POST', base + '/forget', { heading, purge: true, confirm });
        }
        location.reload();
      } catch (e) {
        out.append(alertBox('bad', 'Not done: ' + e.message));
      }
    });
  }

  function init() {
    upgradeTimes();
    mineButtons();
    correctButtons();
    setInterval(() => upgradeTimes(), 30000);
    const page = document.body.dataset.page;
    if (pages[page]) pages[page]();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
