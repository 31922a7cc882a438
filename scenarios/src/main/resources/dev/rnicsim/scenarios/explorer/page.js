// The rnicsim explorer: draws the model's state after each step of a script. Every figure comes from the JSON the
// simulator wrote (one JSON Merge Patch per step); this script only rebuilds each step's state from the patches,
// formats numbers and draws. No network, no other file.
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('data').textContent);
  var STEPS = DATA.steps;
  var states = [];
  var current = -1;

  function clone(o) { return JSON.parse(JSON.stringify(o)); }

  // RFC 7386: null removes a member, an object merges, anything else replaces.
  function merge(target, patch) {
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) { return patch; }
    var t = (target && typeof target === 'object' && !Array.isArray(target)) ? target : {};
    Object.keys(patch).forEach(function (k) {
      if (patch[k] === null) { delete t[k]; } else { t[k] = merge(t[k], patch[k]); }
    });
    return t;
  }

  (function build() {
    var s = {};
    for (var i = 0; i < STEPS.length; i++) {
      if (STEPS[i].snapshotError) {
        window.explorerErrors.push('step ' + (i + 1) + ' could not be recorded: ' + STEPS[i].snapshotError);
      }
      s = merge(clone(s), STEPS[i].patch || {});
      states.push(s);
    }
  })();

  function esc(v) {
    return String(v === undefined || v === null ? '' : v).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  function $(id) { return document.getElementById(id); }
  function keysOf(o) { return o ? Object.keys(o) : []; }
  function numKeys(o) { return keysOf(o).sort(function (a, b) { return Number(a) - Number(b); }); }
  // The member of a patch at a path, or undefined: what the step changed there.
  function at(patch) {
    var p = patch;
    for (var i = 1; i < arguments.length; i++) {
      if (p === null || p === undefined || typeof p !== 'object') { return undefined; }
      p = p[arguments[i]];
    }
    return p;
  }
  function bytes(n) {
    if (n === undefined || n === null) { return ''; }
    if (n < 0) { return 'unlimited'; }
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0; var v = n;
    while (v >= 1024 && v % 1024 === 0 && i < units.length - 1) { v /= 1024; i++; }
    if (v >= 1024 && i < units.length - 1) { return (n / Math.pow(1024, i + 1)).toFixed(1) + ' ' + units[i + 1]; }
    return v + ' ' + units[i];
  }
  function time(ns) {
    if (ns < 1000) { return ns + ' ns'; }
    if (ns < 1e6) { return (ns / 1e3).toFixed(1) + ' us'; }
    if (ns < 1e9) { return (ns / 1e6).toFixed(2) + ' ms'; }
    return (ns / 1e9).toFixed(3) + ' s';
  }
  function hex(n) { return '0x' + Number(n).toString(16); }
  function keyHtml(key, index, variant) {
    return '<span class="key" title="key ' + esc(key) + ' = MPT index ' + index + ', variant ' + variant + '">'
      + '<span class="idx">' + esc(hex(index)) + '</span><span class="var">' + esc(hex(variant)) + '</span></span> '
      + '<code>' + esc(key) + '</code>';
  }
  function heading(narration) {
    var m = /^==\s*(.+?)\s*==/.exec(narration || '');
    return m ? m[1] : null;
  }
  function gauge(label, used, limit, unit, changed, id) {
    var unlimited = limit === undefined || limit === null || limit < 0;
    var frac = unlimited ? 0 : Math.min(1, limit === 0 ? 1 : used / limit);
    var cls = 'gauge' + (frac >= 1 ? ' full' : frac >= 0.8 ? ' high' : '') + (changed ? ' changed' : '');
    var fmt = unit === 'bytes' ? bytes : function (v) { return String(v); };
    return '<div class="' + cls + '" data-gauge="' + esc(id) + '" data-used="' + used + '" data-limit="'
      + (unlimited ? -1 : limit) + '"><div class="label"><span>' + esc(label) + '</span><span class="mono">'
      + esc(fmt(used)) + ' of ' + (unlimited ? 'unlimited' : esc(fmt(limit))) + '</span></div>'
      + '<div class="bar"><div class="fill" style="width:' + (frac * 100).toFixed(1) + '%"></div></div></div>';
  }

  // ---------------------------------------------------------------- the step list
  function renderList() {
    var html = [];
    STEPS.forEach(function (s, i) {
      var h = heading(s.narration);
      if (h) {
        html.push('<button type="button" class="item heading" data-step="' + i + '">' + esc(h) + '</button>');
      }
      html.push('<button type="button" class="item step' + (s.ok ? '' : ' failed') + '" data-step="' + i
        + '" title="' + esc(s.where) + '">' + (i + 1) + '. ' + esc(s.line) + '</button>');
    });
    $('steps').innerHTML = html.join('');
    $('steps').addEventListener('click', function (e) {
      var b = e.target.closest('[data-step]');
      if (b) { show(Number(b.getAttribute('data-step'))); }
    });
  }

  // ---------------------------------------------------------------- the step itself
  function renderStep(s, i) {
    var h = [];
    h.push('<div class="where">step ' + (i + 1) + ' of ' + STEPS.length + ', ' + esc(s.where) + '</div>');
    if (s.narration) {
      h.push('<p class="narration">' + esc(s.narration.replace(/^==\s*.+?\s*==\s*/, '')) + '</p>');
      var t = heading(s.narration);
      if (t) { h.unshift('<h2>' + esc(t) + '</h2>'); }
    }
    h.push('<code class="line" id="step-line">' + esc(s.line) + '</code>');
    if (!s.ok) {
      h.push('<pre class="outcome failed" id="step-outcome"><span class="errno">' + esc(s.errno) + '</span>: '
        + esc(s.outcome) + '</pre>');
    } else if (s.outcome) {
      h.push('<pre class="outcome" id="step-outcome">' + esc(s.outcome) + '</pre>');
    }
    if (s.expects && s.expects.length) {
      h.push('<ul class="expects">' + s.expects.map(function (e) {
        return '<li class="' + (e.held ? 'held' : 'failed') + '"><code>expect ' + esc(e.text) + '</code>'
          + (e.held ? '' : ': <span class="errno">' + esc(e.failure) + '</span>') + '</li>';
      }).join('') + '</ul>');
    }
    var changed = changes(s.patch || {}, i > 0 ? states[i - 1] : {}, states[i]);
    if (changed.length) {
      h.push('<div id="step-changed">Changed: <span class="changed-list">' + changed.map(esc).join(', ') + '</span></div>');
    }
    h.push('<div class="muted">simulated time ' + esc(time(s.timeNs)) + (s.durationNs ? ', this step took '
      + esc(time(s.durationNs)) : '') + '</div>');
    $('step').innerHTML = h.join('');
  }

  // The parts of the state a patch touches, in words (the patch is the model's; this only names its paths).
  function changes(patch, before, after) {
    var out = [];
    function procName(hn, pid) {
      var p = (after.hosts && after.hosts[hn] && after.hosts[hn].processes[pid])
        || (before.hosts && before.hosts[hn] && before.hosts[hn].processes[pid]);
      return p ? p.name : 'pid ' + pid;
    }
    keysOf(patch.hosts).forEach(function (hn) {
      var hp = patch.hosts[hn];
      if (hp === null) { out.push('host ' + hn + ' removed'); return; }
      if (!before.hosts || !before.hosts[hn]) { out.push('new host ' + hn); return; }
      if (hp.framesFree !== undefined) { out.push('free frames of ' + hn); }
      keysOf(hp.processes).forEach(function (pid) {
        var pp = hp.processes[pid];
        var name = procName(hn, pid);
        if (pp === null) { out.push('process ' + name + ' gone'); return; }
        if (!before.hosts[hn].processes[pid]) { out.push('new process ' + name); return; }
        if (pp.exited !== undefined) { out.push(name + ' exited'); }
        if (pp.pinnedVmPages !== undefined) { out.push('pinned_vm of ' + name); }
        if (pp.memlockBytes !== undefined) { out.push('RLIMIT_MEMLOCK of ' + name); }
        if (pp.vmas !== undefined) { out.push('VMAs of ' + name); }
        keysOf(pp.buffers).forEach(function (b) {
          out.push(pp.buffers[b] === null ? 'buffer ' + b + ' gone' : 'frames of ' + b);
        });
      });
    });
    keysOf(patch.devices).forEach(function (dn) {
      var dp = patch.devices[dn];
      var name = dn.replace(/^sim:[^/]*\//, '');
      if (!before.devices || !before.devices[dn]) { out.push('new device ' + name); return; }
      if (dp.keys !== undefined) { out.push('MPT keys of ' + name); }
      if (dp.mtt !== undefined) { out.push('MTT of ' + name); }
      if (dp.cache !== undefined) { out.push('translation cache of ' + name); }
    });
    keysOf(patch.qps).forEach(function (q) { out.push('QP ' + q); });
    keysOf(patch.cqs).forEach(function (c) { out.push('CQ ' + c); });
    return out;
  }

  // ---------------------------------------------------------------- one address, followed
  function box(x, y, w, hgt, title, lines, cls) {
    var out = '<g><rect class="box ' + (cls || '') + '" x="' + x + '" y="' + y + '" width="' + w + '" height="' + hgt
      + '" rx="5"></rect><text class="title" x="' + (x + 8) + '" y="' + (y + 17) + '">' + esc(title) + '</text>';
    lines.forEach(function (l, k) {
      out += '<text x="' + (x + 8) + '" y="' + (y + 36 + 16 * k) + '">' + esc(l) + '</text>';
    });
    return out + '</g>';
  }
  function arrow(x1, x2, y, broken) {
    return '<path class="arrow' + (broken ? ' broken' : '') + '" d="M' + x1 + ' ' + y + ' L' + (x2 - 4) + ' ' + y
      + '"></path>';
  }
  function previousWalk(i, w) {
    if (i === 0) { return null; }
    var p = STEPS[i - 1].walks || [];
    for (var k = 0; k < p.length; k++) {
      if (p[k].va === w.va && p[k].process === w.process && p[k].processName === w.processName) { return p[k]; }
    }
    return null;
  }
  // Where a work request's rkey came from, as the model's run recorded it.
  function history(r) {
    var h = r.rkeyHistory;
    if (!h) { return ''; }
    return '<p class="key-history">That key was issued at <a href="#step=' + h.step + '">step ' + h.step + '</a> (<code>'
      + esc(h.line) + '</code>)' + (h.freed ? ' and freed at <a href="#step=' + h.freed.step + '">step '
      + h.freed.step + '</a> (<code>' + esc(h.freed.line) + '</code>)' : '') + '.</p>';
  }
  // Whether the step's patch changed the frames of the script's buffer that holds a walked address.
  function framesChanged(patch, st, w) {
    var hit = false;
    keysOf(st.hosts).forEach(function (hn) {
      var p = st.hosts[hn].processes[String(w.process)];
      if (!p || p.name !== w.processName) { return; }
      keysOf(p.buffers).forEach(function (b) {
        var a = parseInt(p.buffers[b].addr, 16);
        var va = parseInt(w.va, 16);
        if (va >= a && va < a + p.buffers[b].lengthBytes
            && at(patch, 'hosts', hn, 'processes', String(w.process), 'buffers', b, 'runs') !== undefined) {
          hit = true;
        }
      });
    });
    return hit;
  }
  function renderFollow(s, i) {
    var w = s.follow >= 0 ? s.walks[s.follow] : null;
    if (!w) {
      var why = s.walks && s.walks.length ? 'The address this step names has no page behind it yet ('
        + esc(s.walks[0].note || 'not present') + ').' : 'This step names no address in a process.';
      $('follow-body').innerHTML = '<p class="muted" id="follow-none">' + why + '</p>';
      return;
    }
    var before = previousWalk(i, w);
    var W = 196; var G = 34; var H = 122; var y = 22;
    var xs = [0, 1, 2, 3, 4].map(function (k) { return 4 + k * (W + G); });
    var svg = ['<svg id="follow-svg" viewBox="0 0 ' + (xs[4] + W + 6) + ' ' + (H + 32) + '" width="100%" '
      + 'role="img" aria-label="the address followed from virtual page to MTT entry">'
      + '<defs><marker id="arrowhead" markerWidth="8" markerHeight="8" refX="6" refY="4" orient="auto">'
      + '<path d="M0,0 L8,4 L0,8 z" fill="#1f6feb"></path></marker></defs>'];
    svg.push('<text class="title" x="4" y="13">' + esc(w.expr) + ' in ' + esc(w.processName) + '</text>');
    svg.push(box(xs[0], y, W, H, 'virtual page', [w.va, 'page ' + w.pageVa, bytes(w.pageBytes) + ' page',
      'offset ' + w.offset], ''));
    svg.push(arrow(xs[0] + W, xs[1], y + H / 2));
    var lv = w.levels.map(function (l) { return l.name + '[' + l.index + ']'; });
    svg.push(box(xs[1], y, W, H, 'page-table walk', [lv.slice(0, 2).join(' > '), lv.slice(2).join(' > '),
      'leaf: ' + bytes(w.pageBytes) + ' page', w.vma ? 'VMA ' + w.vma.perms + ' ' + w.vma.kind : ''], ''));
    svg.push(arrow(xs[1] + W, xs[2], y + H / 2));
    var frameHot = before ? before.pin !== w.pin || before.map !== w.map || before.pfn !== w.pfn
      : framesChanged(s.patch || {}, states[i], w);
    svg.push(box(xs[2], y, W, H, 'physical frame', ['pfn ' + hex(w.pfn), 'phys ' + w.phys,
      w.zero ? 'shared zero page' : 'pin count ' + w.pin + ', map ' + w.map, w.zone ? 'zone ' + w.zone : ''],
      frameHot ? 'hot' : ''));
    var m = w.mtt;
    if (m && m.index >= 0) {
      var mb = previousWalk(i, w);
      var mttHot = !mb || !mb.mtt || mb.mtt.index !== m.index || mb.mtt.cached !== m.cached;
      svg.push(arrow(xs[2] + W, xs[3], y + H / 2, !m.present));
      svg.push(box(xs[3], y, W, H, 'MTT entry ' + m.index, [m.present ? 'dma ' + m.dma : 'zapped: not present',
        'of MR ' + m.mr + ' on ' + m.device.replace(/^sim:[^/]*\//, ''), 'iova ' + m.iova,
        m.cached ? 'in the translation cache' : 'not cached'], m.present ? (mttHot ? 'hot' : '') : 'missing'));
      svg.push(arrow(xs[4], xs[3] + W + 4, y + H / 2));
      svg.push(box(xs[4], y, W, H, 'MPT entry (the key)', [m.key, 'index ' + hex(m.mptIndex) + ' (' + m.mptIndex + ')',
        'variant ' + hex(m.variant), 'MR ' + m.mr],
        at(s.patch || {}, 'devices', m.device, 'keys', String(m.mptIndex)) !== undefined ? 'hot' : ''));
    } else {
      svg.push(arrow(xs[2] + W, xs[3], y + H / 2, true));
      svg.push(box(xs[3], y, W * 2 + G, H, 'no MTT entry', ['no live MR maps this page:',
        'the NIC cannot reach it (a remote access',
        'is refused: REM_ACCESS_ERR)'], 'missing'));
    }
    svg.push('</svg>');
    var note = '';
    (s.wrs || []).forEach(function (r) {
      if (r.rkey) {
        note += '<p>The work request carried rkey ' + keyHtml(r.rkey, r.rkeyIndex, r.rkeyVariant) + ': MPT slot '
          + r.rkeyIndex + ' on ' + esc(String(r.remoteDevice).replace(/^sim:/, '')) + ' is ' + esc(r.slot)
          + ' &rarr; <strong class="' + (r.status === 'SUCCESS' ? '' : 'errno') + '">' + esc(r.status)
          + '</strong></p>' + history(r);
      }
    });
    $('follow-body').innerHTML = svg.join('') + note;
  }

  // ---------------------------------------------------------------- limits
  function renderLimits(st, patch) {
    var h = [];
    keysOf(st.hosts).forEach(function (hn) {
      var host = st.hosts[hn];
      keysOf(host.processes).forEach(function (pid) {
        var p = host.processes[pid];
        if (p.exited) { return; }
        var ch = at(patch, 'hosts', hn, 'processes', pid, 'pinnedVmPages') !== undefined;
        var limit = p.capIpcLock ? -1 : p.memlockBytes;
        h.push(gauge(p.name + ' on ' + hn + ': pinned_vm / RLIMIT_MEMLOCK' + (p.capIpcLock ? ' (CAP_IPC_LOCK)' : ''),
          p.pinnedVmPages * 4096, limit, 'bytes', ch, 'memlock:' + hn + ':' + p.name));
      });
    });
    keysOf(st.devices).forEach(function (dn) {
      var d = st.devices[dn];
      var name = dn.replace(/^sim:/, '');
      h.push(gauge(name + ': MPT entries / max_mr', d.mptInUse, d.maxMr, 'count',
        at(patch, 'devices', dn, 'mptInUse') !== undefined, 'max_mr:' + name));
      h.push(gauge(name + ': MTT entries / capacity (' + d.mtt.allocator + ')', d.mtt.inUse, d.mtt.capacity, 'count',
        at(patch, 'devices', dn, 'mtt', 'inUse') !== undefined, 'mtt:' + name));
    });
    $('limits-body').innerHTML = h.join('') || '<p class="muted">No process or device yet.</p>';
  }

  // ---------------------------------------------------------------- page-table walks
  function renderWalks(s) {
    if (!s.walks || !s.walks.length) {
      $('walks-body').innerHTML = '<p class="muted">This step names no address in a process.</p>';
      return;
    }
    var h = ['<table id="walks-table"><tr><th>address</th><th>walk</th><th>leaf</th><th>frame</th><th>pin</th>'
      + '<th>map</th><th>MTT</th></tr>'];
    s.walks.forEach(function (w) {
      h.push('<tr data-va="' + esc(w.va) + '"><td><code>' + esc(w.expr) + '</code><br><span class="mono muted">'
        + esc(w.processName) + ' ' + esc(w.va) + '</span></td><td class="mono">'
        + w.levels.map(function (l) { return esc(l.name) + '[' + l.index + ']'; }).join(' &rarr; ')
        + (w.note ? '<br><span class="muted">' + esc(w.note) + '</span>' : '') + '</td><td>'
        + (w.pageBytes ? esc(bytes(w.pageBytes)) : '-') + '</td><td class="mono">'
        + (w.pfn >= 0 ? 'pfn ' + esc(hex(w.pfn)) : '-') + '</td><td class="num' + (w.pin > 0 ? ' pinned' : '') + '">'
        + (w.pin === undefined ? '' : w.pin) + '</td><td class="num">' + (w.map === undefined ? '' : w.map)
        + '</td><td class="mono">' + (w.mtt ? esc(w.mtt.mr) + ' #' + w.mtt.index : '-') + '</td></tr>');
    });
    h.push('</table>');
    $('walks-body').innerHTML = h.join('');
  }

  // ---------------------------------------------------------------- processes
  function renderProcesses(st, prev, patch) {
    var h = [];
    keysOf(st.hosts).forEach(function (hn) {
      var host = st.hosts[hn];
      h.push('<div class="host">' + esc(hn) + ' <span class="muted">' + esc(bytes(host.framesTotal * 4096))
        + ' RAM, ' + esc(bytes(host.framesFree * 4096)) + ' free; 2 MiB huge pages ' + host.hugepages2mFree
        + ' free of ' + host.hugepages2mTotal + '</span></div>');
      keysOf(host.processes).forEach(function (pid) {
        var p = host.processes[pid];
        var pp = at(patch, 'hosts', hn, 'processes', pid);
        h.push('<div class="' + (pp && pp.exited !== undefined ? 'changed' : '') + '"><strong>' + esc(p.name)
          + '</strong> <span class="muted">pid ' + p.pid + (p.exited ? ', exited' : '') + ', RLIMIT_MEMLOCK '
          + esc(p.capIpcLock ? 'bypassed (CAP_IPC_LOCK)' : bytes(p.memlockBytes)) + ', pinned_vm '
          + p.pinnedVmPages + ' pages</span></div>');
        if (p.exited) { return; }
        var rows = [];
        var vmas = p.vmas || {};
        var old = prev && prev.hosts && prev.hosts[hn] && prev.hosts[hn].processes[pid]
          ? prev.hosts[hn].processes[pid].vmas || {} : {};
        var all = keysOf(vmas).concat(keysOf(old).filter(function (k) { return !vmas[k]; }));
        all.sort(function (a, b) { return parseInt(a, 16) - parseInt(b, 16); });
        all.forEach(function (k) {
          var v = vmas[k] || old[k];
          var cls = !vmas[k] ? 'removed' : at(pp, 'vmas', k) !== undefined ? 'changed' : '';
          var bufs = keysOf(p.buffers).filter(function (b) {
            var a = parseInt(p.buffers[b].addr, 16);
            return a >= parseInt(v.start, 16) && a < parseInt(v.end, 16);
          });
          rows.push('<tr class="' + cls + '"><td class="mono">' + esc(v.start) + '-' + esc(v.end) + '</td><td>'
            + esc(bytes(v.lengthBytes)) + '</td><td class="mono">' + esc(v.perms) + '</td><td>' + esc(v.kind)
            + (v.pageBytes > 4096 ? ' (' + esc(bytes(v.pageBytes)) + ' pages)' : '') + '</td><td>'
            + esc(bufs.join(', ')) + '</td></tr>');
        });
        if (rows.length) {
          h.push('<table class="vmas"><tr><th>VMA</th><th>size</th><th>perms</th><th>kind</th><th>buffers</th></tr>'
            + rows.join('') + '</table>');
        }
        if (p.moreVmas) { h.push('<p class="muted">and ' + p.moreVmas + ' more VMAs</p>'); }
      });
    });
    $('processes-body').innerHTML = h.join('') || '<p class="muted">No host yet.</p>';
  }

  // ---------------------------------------------------------------- frames
  function renderFrames(st, patch) {
    var h = [];
    keysOf(st.hosts).forEach(function (hn) {
      keysOf(st.hosts[hn].processes).forEach(function (pid) {
        var p = st.hosts[hn].processes[pid];
        keysOf(p.buffers).forEach(function (b) {
          var buf = p.buffers[b];
          if (!buf.runs) { return; }
          var ch = at(patch, 'hosts', hn, 'processes', pid, 'buffers', b, 'runs') !== undefined;
          h.push('<div class="' + (ch ? 'changed' : '') + '"><strong>' + esc(b) + '</strong> <span class="muted">of '
            + esc(p.name) + ' on ' + esc(hn) + ', ' + esc(buf.addr) + ', ' + esc(bytes(buf.lengthBytes))
            + '</span></div>');
          var rows = buf.runs.map(function (r) {
            var frames = r.pages * r.pageBytes / 4096;
            return '<tr class="' + (ch ? 'changed' : '') + '"><td class="mono">' + esc(r.va) + '</td><td class="num">'
              + r.pages + ' x ' + esc(bytes(r.pageBytes)) + '</td><td class="mono">'
              + (r.pfn < 0 ? '<span class="muted">not present</span>' : r.zero ? 'zero page'
                : esc(hex(r.pfn)) + (frames > 1 ? '-' + esc(hex(r.pfn + frames - 1)) : ''))
              + '</td><td class="num' + (r.pin > 0 ? ' pinned' : '') + '">' + r.pin + '</td><td class="num">' + r.map
              + '</td><td>' + esc(r.zone || '') + '</td></tr>';
          });
          h.push('<table class="runs" data-buffer="' + esc(b) + '"><tr><th>first page</th><th>pages</th><th>frames '
            + '(pfn)</th><th>pin count</th><th>map count</th><th>zone</th></tr>' + rows.join('') + '</table>');
          if (buf.moreRuns) { h.push('<p class="muted">and ' + buf.moreRuns + ' more runs of frames</p>'); }
          if (buf.scannedBytes < buf.lengthBytes) {
            h.push('<p class="muted">first ' + esc(bytes(buf.scannedBytes)) + ' shown</p>');
          }
        });
      });
    });
    $('frames-body').innerHTML = h.join('') || '<p class="muted">No buffer yet.</p>';
  }

  // ---------------------------------------------------------------- MPT
  function renderMpt(st, prev, patch) {
    var h = [];
    keysOf(st.devices).forEach(function (dn) {
      var d = st.devices[dn];
      var old = prev && prev.devices && prev.devices[dn] ? prev.devices[dn].keys || {} : {};
      h.push('<div class="host">' + esc(dn.replace(/^sim:/, '')) + ' <span class="muted">' + esc(d.profile)
        + ', keys of ' + (32 - d.variantBits) + ' index bits and ' + d.variantBits + ' variant bits, '
        + d.mptInUse + ' of max_mr ' + d.maxMr + ' in use</span></div>');
      var ks = numKeys(d.keys).concat(keysOf(old).filter(function (k) { return !d.keys[k]; }));
      if (!ks.length) { h.push('<p class="muted">no key</p>'); return; }
      var rows = ks.map(function (k) {
        var e = d.keys[k] || old[k];
        var removed = !d.keys[k];
        var cls = removed ? 'removed' : at(patch, 'devices', dn, 'keys', k) !== undefined ? 'changed' : '';
        return '<tr class="' + cls + '" data-key="' + esc(e.key) + '" data-name="' + esc(e.name) + '" data-index="'
          + e.index + '" data-variant="' + e.variant + '" data-page-bytes="' + (e.pageBytes || '')
          + '" data-mtt-entries="' + (e.mttEntries === undefined ? '' : e.mttEntries) + '"><td>'
          + keyHtml(e.key, e.index, e.variant) + '</td><td>' + esc(e.name) + '</td><td>' + esc(e.kind) + '</td><td>'
          + esc(removed ? 'freed' : e.state || '') + '</td><td class="num">' + esc(e.pd === undefined ? '' : e.pd)
          + '</td><td class="mono">' + esc(e.iova || e.addr) + '</td><td>' + esc(bytes(e.lengthBytes))
          + '</td><td class="page-size">' + esc(e.pageBytes ? bytes(e.pageBytes) : '') + '</td><td class="mono mtt">'
          + (e.mttEntries !== undefined ? e.mttEntries + ' @' + e.mttFirst + (e.mttReserved !== e.mttEntries
            ? ' (' + e.mttReserved + ' reserved)' : '') : '') + '</td></tr>';
      });
      h.push('<table class="mpt" data-device="' + esc(dn) + '"><tr><th>key (index | variant)</th><th>name</th>'
        + '<th>kind</th><th>state</th><th>PD</th><th>iova</th><th>length</th><th>page size</th><th>MTT entries</th>'
        + '</tr>' + rows.join('') + '</table>');
      if (d.moreKeys) { h.push('<p class="muted">and ' + d.moreKeys + ' more keys</p>'); }
    });
    $('mpt-body').innerHTML = h.join('') || '<p class="muted">No device yet.</p>';
  }

  // ---------------------------------------------------------------- MTT
  function renderMtt(st, patch) {
    var h = [];
    keysOf(st.devices).forEach(function (dn) {
      var d = st.devices[dn];
      var m = d.mtt;
      h.push('<div class="host">' + esc(dn.replace(/^sim:/, '')) + ' <span class="muted">' + esc(m.allocator)
        + ' allocator: ' + m.inUse + ' of ' + m.capacity + ' entries in use (' + m.requested + ' asked for), '
        + m.free + ' free, largest free block ' + m.largestFree + '</span></div>');
      var ks = numKeys(d.keys).filter(function (k) { return d.keys[k].mttEntries !== undefined; });
      var end = 0;
      ks.forEach(function (k) { end = Math.max(end, d.keys[k].mttFirst + d.keys[k].mttReserved); });
      var span = m.capacity <= 4096 ? m.capacity : Math.min(m.capacity, Math.max(64, Math.ceil(end * 1.25)));
      var bar = ['<div class="mttbar" title="MTT entries 0-' + span + ' of ' + m.capacity + '">'];
      ks.forEach(function (k) {
        var e = d.keys[k];
        var ch = at(patch, 'devices', dn, 'keys', k) !== undefined;
        bar.push('<div class="blk' + (ch ? ' changed' : '') + '" style="left:' + (e.mttFirst / span * 100).toFixed(3)
          + '%;width:' + (e.mttReserved / span * 100).toFixed(3) + '%" title="' + esc(e.name) + ': entries '
          + e.mttFirst + '-' + (e.mttFirst + e.mttEntries - 1) + (e.mttReserved !== e.mttEntries ? ', block of '
            + e.mttReserved + ' reserved' : '') + '"><div class="used" style="width:'
          + (e.mttEntries / e.mttReserved * 100).toFixed(1) + '%"></div><span>' + esc(e.name) + '</span></div>');
      });
      bar.push('</div>');
      h.push(bar.join(''));
      if (span < m.capacity) { h.push('<p class="muted">entries 0-' + span + ' of ' + m.capacity + ' drawn</p>'); }
      var rows = [];
      ks.forEach(function (k) {
        var e = d.keys[k];
        var ch = at(patch, 'devices', dn, 'keys', k, 'mttSample') !== undefined;
        (e.mttSample || []).forEach(function (x) {
          rows.push('<tr class="' + (ch ? 'changed' : '') + '"><td>' + esc(e.name) + '</td><td class="num">' + x.index
            + '</td><td class="mono">' + esc(x.dma) + '</td><td>' + (x.cached ? 'cached' : '') + '</td></tr>');
        });
        if (e.mttEntries > (e.mttSample || []).length) {
          rows.push('<tr><td>' + esc(e.name) + '</td><td class="num muted">...</td><td class="muted">'
            + (e.mttEntries - e.mttSample.length) + ' more entries</td><td></td></tr>');
        }
      });
      if (rows.length) {
        h.push('<table class="mtt-entries"><tr><th>MR</th><th>entry</th><th>DMA address of its page</th>'
          + '<th>translation cache</th></tr>' + rows.join('') + '</table>');
      }
    });
    $('mtt-body').innerHTML = h.join('') || '<p class="muted">No device yet.</p>';
  }

  // ---------------------------------------------------------------- translation cache
  function renderCache(s, st, patch) {
    var h = [];
    keysOf(st.devices).forEach(function (dn) {
      var d = st.devices[dn];
      var c = d.cache;
      var act = (s.cacheActivity || {})[dn];
      h.push('<div class="host' + (act ? ' changed' : '') + '">' + esc(dn.replace(/^sim:/, ''))
        + ' <span class="muted">' + c.capacity + ' entries; hits ' + c.hits + ', misses ' + c.misses + ', evictions '
        + c.evictions + ', invalidations ' + c.invalidations + '</span>'
        + (act ? ' <span class="mono">this step: +' + act.hits + ' hits, +' + act.misses + ' misses</span>' : '')
        + '</div>');
      var rows = numKeys(d.keys).map(function (k) {
        var e = d.keys[k];
        var ch = at(patch, 'devices', dn, 'keys', k, 'mptCached') !== undefined
          || at(patch, 'devices', dn, 'keys', k, 'mttCached') !== undefined;
        return '<tr class="' + (ch ? 'changed' : '') + '"><td>' + esc(e.name) + '</td><td><code>' + esc(e.key)
          + '</code></td><td>' + (e.mptCached ? 'cached' : '-') + '</td><td class="num">'
          + (e.mttProbed !== undefined ? e.mttCached + ' of ' + e.mttProbed : '-') + '</td></tr>';
      });
      if (rows.length) {
        h.push('<table class="cache"><tr><th>MR</th><th>key</th><th>MPT entry</th><th>MTT entries cached</th></tr>'
          + rows.join('') + '</table>');
      }
    });
    $('cache-body').innerHTML = h.join('') || '<p class="muted">No device yet.</p>';
  }

  // ---------------------------------------------------------------- work requests
  function renderWrs(s, st, patch) {
    var h = [];
    if (s.wrs && s.wrs.length) {
      h.push('<table id="wr-table"><tr><th>QP</th><th>opcode</th><th>bytes</th><th>local SGEs (lkey)</th>'
        + '<th>remote</th><th>status</th></tr>');
      s.wrs.forEach(function (r) {
        h.push('<tr><td>' + esc(r.qp) + '</td><td>' + esc(r.opcode) + '</td><td class="num">' + r.bytes + '</td><td>'
          + r.sges.map(function (g) { return keyHtml(g.lkey, g.index, g.variant) + ' ' + esc(g.addr); }).join('<br>')
          + '</td><td>' + (r.rkey ? keyHtml(r.rkey, r.rkeyIndex, r.rkeyVariant) + ' ' + esc(r.remoteAddr) : '-')
          + '</td><td class="' + (r.status === 'SUCCESS' ? '' : 'errno') + '">' + esc(r.status) + '</td></tr>'
          + (r.check && r.check !== 'VALID' ? '<tr class="wr-detail"><td colspan="6" class="muted detail">'
            + esc(r.check) + ': ' + esc(r.detail) + '</td></tr>' : ''));
      });
      h.push('</table>');
      if (s.wrsDropped) { h.push('<p class="muted">and ' + s.wrsDropped + ' more work requests</p>'); }
    }
    if (s.completions && s.completions.length) {
      h.push('<table id="wc-table"><tr><th>completion wr_id</th><th>status</th><th>opcode</th><th>QP</th>'
        + '<th>bytes</th></tr>' + s.completions.map(function (c) {
          return '<tr><td class="num">' + c.wrId + '</td><td class="' + (c.status === 'SUCCESS' ? '' : 'errno')
            + '">' + esc(c.status) + '</td><td>' + esc(c.opcode) + '</td><td class="mono">' + esc(hex(c.qpNum))
            + '</td><td class="num">' + c.byteLen + '</td></tr>';
        }).join('') + '</table>');
    }
    if (!h.length) { h.push('<p class="muted">No work request ran and no completion was polled in this step.</p>'); }
    var qps = keysOf(st.qps);
    if (qps.length) {
      h.push('<table class="qps"><tr><th>QP</th><th>number</th><th>state</th><th>sends waiting</th>'
        + '<th>receives posted</th></tr>' + qps.map(function (q) {
          var x = st.qps[q];
          return '<tr class="' + (at(patch, 'qps', q) !== undefined ? 'changed' : '') + '"><td>' + esc(q) + '</td>'
            + '<td class="mono">' + esc(hex(x.qpNum)) + '</td><td>' + esc(x.state) + '</td><td class="num">'
            + x.sendsWaiting + '</td><td class="num">' + x.receivesPosted + '</td></tr>';
        }).join('') + '</table>');
    }
    $('wrs-body').innerHTML = h.join('');
  }

  // ---------------------------------------------------------------- navigation
  function show(i) {
    if (!STEPS.length) { return; }
    i = Math.max(0, Math.min(STEPS.length - 1, i));
    current = i;
    var s = STEPS[i];
    var st = states[i];
    var prev = i > 0 ? states[i - 1] : {};
    var patch = s.patch || {};
    $('step-index').textContent = 'step ' + (i + 1) + ' of ' + STEPS.length;
    $('clock').textContent = 'simulated time ' + time(s.timeNs);
    $('prev').disabled = i === 0;
    $('next').disabled = i === STEPS.length - 1;
    renderStep(s, i);
    renderFollow(s, i);
    renderLimits(st, patch);
    renderWalks(s);
    renderProcesses(st, prev, patch);
    renderFrames(st, patch);
    renderMpt(st, prev, patch);
    renderMtt(st, patch);
    renderCache(s, st, patch);
    renderWrs(s, st, patch);
    var items = document.querySelectorAll('#steps .item.step');
    items.forEach(function (b) { b.classList.toggle('current', Number(b.getAttribute('data-step')) === i); });
    var cur = document.querySelector('#steps .item.step.current');
    if (cur && cur.scrollIntoView) { cur.scrollIntoView({block: 'nearest'}); }
    document.body.setAttribute('data-step', String(i));
    if (history.replaceState) { history.replaceState(null, '', '#step=' + (i + 1)); }
    $('errors').textContent = window.explorerErrors.length ? 'page errors: ' + window.explorerErrors.join('; ') : '';
  }

  document.addEventListener('keydown', function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) { return; }
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { show(current + 1); e.preventDefault(); }
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { show(current - 1); e.preventDefault(); }
    else if (e.key === 'Home') { show(0); e.preventDefault(); }
    else if (e.key === 'End') { show(STEPS.length - 1); e.preventDefault(); }
  });
  // Links to a step move there at once (the hash follows through show()).
  document.addEventListener('click', function (e) {
    var a = e.target.closest ? e.target.closest('a[href^="#step="]') : null;
    if (a) {
      e.preventDefault();
      show(Number(a.getAttribute('href').slice('#step='.length)) - 1);
    }
  });
  window.addEventListener('hashchange', function () {
    var h = /step=(\d+)/.exec(location.hash || '');
    if (h && Number(h[1]) - 1 !== current) { show(Number(h[1]) - 1); }
  });
  $('prev').addEventListener('click', function () { show(current - 1); });
  $('next').addEventListener('click', function () { show(current + 1); });
  $('title').textContent = DATA.title;
  renderList();
  var m = /step=(\d+)/.exec(location.hash || '');
  if (!STEPS.length) {
    $('step').innerHTML = '<p>This run has no step.</p>';
  } else {
    show(m ? Number(m[1]) - 1 : 0);
  }
})();
