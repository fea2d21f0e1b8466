//===- MicroBatches.cpp - a stage's micro-batches as loops ----------------===//
//
// Part of Ober-Train. See MicroBatches.h. The order is cut into stretches,
// each the longest repetition (at least twice) of a run of units whose
// micro-batches all advance by the same stride, or a single unit. A loop
// carries the micro-batch offset, the carried values and the rings it
// touches. A unit reads a value of another unit of its micro-batch
// directly when both run in one iteration of one loop, or both outside
// loops; otherwise a cheap value (a view, a cast, a constant, a slice,
// scalar arithmetic) is computed again from what it reads, and any other
// waits in a ring.
//
//===----------------------------------------------------------------------===//

#include "MicroBatches.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <set>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::partition;

namespace {

/// `count` iterations of the runs `order[start, start + length)`, the
/// micro-batches advancing by `stride` each; count 1 is one run.
struct Segment {
  size_t start;
  size_t length;
  int64_t count, stride;
};

/// The longest runs of a stretch tried as a loop body.
constexpr size_t kMaxPeriod = 512;

SmallVector<Segment> segmentsOf(ArrayRef<UnitRun> order) {
  SmallVector<Segment> out;
  size_t n = order.size();
  for (size_t p = 0; p < n;) {
    Segment best{p, 1, 1, 0};
    for (size_t len = 1; p + 2 * len <= n && len <= kMaxPeriod; ++len) {
      int64_t stride = order[p + len].micro - order[p].micro;
      if (stride <= 0)
        continue;
      int64_t reps = 1;
      for (; p + (reps + 1) * len <= n; ++reps) {
        bool same = true;
        for (size_t j = 0; j < len && same; ++j) {
          const UnitRun &a = order[p + j], &b = order[p + reps * len + j];
          same = a.unit == b.unit && b.micro == a.micro + reps * stride;
        }
        if (!same)
          break;
      }
      if (reps >= 2 && reps * len > best.count * best.length)
        best = {p, len, reps, stride};
    }
    out.push_back(best);
    p += best.count * best.length;
  }
  return out;
}

bool isCheap(Operation *op) {
  if (!isa<OberDialect>(op->getDialect()) || op->getNumRegions() > 0)
    return false;
  if (isa<ConstantOp, ReshapeOp, TransposeOp, CastOp, BroadcastToOp,
          SliceOp>(op))
    return true;
  if (auto g = dyn_cast<GatherOp>(op))
    return g.getIndices().getType().getRank() == 0;
  auto scalar = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank() == 0;
  };
  return llvm::all_of(op->getOperands(), scalar) &&
         llvm::all_of(op->getResults(), scalar);
}

class Emitter {
public:
  Emitter(OpBuilder &builder, Spmd &spmd, const MicroBatchTemplate &tmpl,
          ArrayRef<UnitRun> order, Location loc)
      : b(builder), spmd(spmd), tmpl(tmpl), order(order), loc(loc) {}

  FailureOr<SmallVector<Value>> run();

private:
  /// A unit's run is for micro-batch `at` outside loops, and for `at` plus
  /// the loop's offset in the loop being built (`at` is then the
  /// micro-batch of its first iteration).
  /// The loop being built.
  struct Loop {
    Block *body;
    Value offset;
    SmallVector<Value> keys, inits;
    std::vector<IRMapping> maps;
    DenseMap<std::pair<unsigned, int64_t>, size_t> runOf;
    DenseMap<int64_t, Value> micros;
    DenseMap<std::pair<int64_t, int64_t>, Value> slots;
  };
  /// Slots for `depth` micro-batches of a value `unit` makes; `key` (its
  /// zeros) names it among the values loops carry.
  struct Ring {
    int64_t depth;
    unsigned unit;
    Value key = {};
  };

  int unitOf(Value v) const;
  /// The unit whose run makes `v` for the others: its unit, or for a
  /// carried value, the unit that updates it (which reads it first).
  int producerOf(Value v) const;
  /// Units that read a carried value after its update in their
  /// micro-batch read the value it had before (kept, like a unit's value).
  LogicalResult keepCarriedReads();
  bool rematerializable(Value v);
  LogicalResult check();
  bool direct(size_t producer, size_t consumer) const;
  void need(Value v, unsigned unit, size_t at, SetVector<Value> &ringed);
  void planRings();

  Value constant(int64_t v);
  Value microValue(int64_t at);
  Value slotOf(int64_t at, int64_t depth);
  Value carried(Value key);
  /// The values of `unit`'s run for the same micro-batch, when it ran
  /// where its values can be read (outside loops, or in this iteration).
  IRMapping *directMap(int unit, int64_t at);
  Value resolve(Value v, unsigned unit, int64_t at, IRMapping &map);
  void emitRun(unsigned unit, int64_t at, IRMapping &map);
  void emitLoop(const Segment &s);

  OpBuilder &b;
  Spmd &spmd;
  const MicroBatchTemplate &tmpl;
  ArrayRef<UnitRun> order;
  Location loc;

  DenseMap<Block *, unsigned> unitOfBlock;
  DenseMap<Value, unsigned> carriedIndex;
  DenseMap<Value, bool> remat;
  /// Per unit: values of other units its ops read, and the carried values
  /// it reads; per carried value the unit that updates it (-1: none).
  std::vector<SetVector<Value>> foreign;
  std::vector<DenseSet<unsigned>> readsCarried;
  SmallVector<int> updater;
  DenseMap<std::pair<unsigned, int64_t>, size_t> position;
  DenseSet<std::pair<unsigned, unsigned>> kept;
  SmallVector<Segment> segments;
  SmallVector<size_t> segmentAt;
  llvm::MapVector<Value, Ring> rings;
  int64_t micros = 0;

  DenseMap<Value, Value> current;
  std::map<std::pair<unsigned, int64_t>, IRMapping> outside;
  DenseMap<int64_t, Value> constants;
  Loop *loop = nullptr;
  bool broken = false;
};

int Emitter::unitOf(Value v) const {
  if (v == tmpl.index || carriedIndex.count(v))
    return -1;
  auto it = unitOfBlock.find(v.getParentBlock());
  return it == unitOfBlock.end() ? -1 : static_cast<int>(it->second);
}

int Emitter::producerOf(Value v) const {
  auto it = carriedIndex.find(v);
  return it == carriedIndex.end() ? unitOf(v) : updater[it->second];
}

LogicalResult Emitter::keepCarriedReads() {
  for (unsigned u = 0; u < tmpl.units.size(); ++u)
    for (unsigned k : llvm::to_vector(readsCarried[u])) {
      int by = updater[k];
      if (by < 0 || by == static_cast<int>(u))
        continue;
      int after = 0, before = 0;
      for (int64_t m = 0; m < micros; ++m) {
        auto read = position.find({u, m});
        auto write = position.find({static_cast<unsigned>(by), m});
        if (read == position.end() || write == position.end())
          continue;
        (read->second > write->second ? after : before) += 1;
      }
      if (after && before)
        return emitError(loc) << "ober-partition: internal error: unit " << u
                              << " reads carried value " << k
                              << " before its update in some micro-batches "
                                 "and after it in others";
      if (!after)
        continue;
      readsCarried[u].erase(k);
      foreign[u].insert(tmpl.carried[k]);
      kept.insert({u, k});
    }
  return success();
}

bool Emitter::rematerializable(Value v) {
  if (auto it = remat.find(v); it != remat.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  bool ok = def && isCheap(def) && llvm::none_of(def->getOperands(), [&](Value o) {
              return carriedIndex.count(o) > 0;
            });
  return remat[v] = ok;
}

LogicalResult Emitter::check() {
  // Each unit's micro-batches in order (transfers with one tag match in
  // the order they are sent), after the units they read.
  DenseMap<unsigned, int64_t> last;
  for (auto [i, run] : llvm::enumerate(order)) {
    auto [it, fresh] = last.try_emplace(run.unit, run.micro);
    if (!fresh && it->second >= run.micro)
      return emitError(loc) << "ober-partition: internal error: unit "
                            << run.unit << " runs micro-batch " << run.micro
                            << " after " << it->second;
    it->second = run.micro;
    for (Value v : foreign[run.unit]) {
      auto p = position.find({static_cast<unsigned>(producerOf(v)), run.micro});
      if (p == position.end() || p->second >= i)
        return emitError(loc)
               << "ober-partition: internal error: unit " << run.unit
               << " of micro-batch " << run.micro << " runs before unit "
               << producerOf(v) << ", whose values it reads";
    }
  }
  // A carried value is read after the previous micro-batch updated it and
  // before this one does.
  for (auto [k, arg] : llvm::enumerate(tmpl.carried)) {
    int64_t updated = -1;
    for (const UnitRun &run : order) {
      bool reads = readsCarried[run.unit].contains(k);
      bool writes = updater[k] == static_cast<int>(run.unit);
      if ((reads || writes) && updated != run.micro - 1)
        return emitError(loc)
               << "ober-partition: internal error: a value carried from "
                  "micro-batch to micro-batch is read in micro-batch "
               << run.micro << " after the update of micro-batch " << updated;
      if (writes)
        updated = run.micro;
    }
  }
  return success();
}

bool Emitter::direct(size_t producer, size_t consumer) const {
  const Segment &p = segments[segmentAt[producer]],
                &c = segments[segmentAt[consumer]];
  if (p.count == 1 && c.count == 1)
    return true;
  return segmentAt[producer] == segmentAt[consumer] &&
         (producer - p.start) / p.length == (consumer - c.start) / c.length;
}

void Emitter::need(Value v, unsigned unit, size_t at, SetVector<Value> &ringed) {
  int from = producerOf(v);
  if (from < 0 || from == static_cast<int>(unit))
    return;
  size_t p = position.lookup({static_cast<unsigned>(from), order[at].micro});
  if (direct(p, at))
    return;
  if (!rematerializable(v)) {
    ringed.insert(v);
    return;
  }
  for (Value o : v.getDefiningOp()->getOperands())
    need(o, unit, at, ringed);
}

void Emitter::planRings() {
  // Which values wait in a ring: those some run reads neither directly nor
  // by computing them again (every iteration of a loop reads alike).
  SetVector<Value> ringed;
  for (const Segment &s : segments)
    for (size_t at = s.start; at < s.start + s.length; ++at)
      for (Value v : foreign[order[at].unit])
        need(v, order[at].unit, at, ringed);
  // Depth: the most micro-batches one value is kept for at once, from its
  // unit's run to the last run of a unit that reads it (through values
  // computed again, too).
  std::vector<DenseSet<Value>> reads(tmpl.units.size());
  for (unsigned u = 0; u < tmpl.units.size(); ++u) {
    SmallVector<Value> work(foreign[u].begin(), foreign[u].end());
    while (!work.empty()) {
      Value v = work.pop_back_val();
      int from = producerOf(v);
      if (from < 0 || from == static_cast<int>(u) || !reads[u].insert(v).second)
        continue;
      if (rematerializable(v))
        llvm::append_range(work, v.getDefiningOp()->getOperands());
    }
  }
  for (Value v : ringed) {
    unsigned from = producerOf(v);
    SmallVector<std::pair<size_t, size_t>> live(micros, {SIZE_MAX, 0});
    for (auto [i, run] : llvm::enumerate(order)) {
      auto &[first, lastRead] = live[run.micro];
      if (run.unit == from)
        first = i;
      else if (reads[run.unit].contains(v))
        lastRead = std::max(lastRead, i);
    }
    // Sweep: micro-batches kept at each position.
    std::multiset<int64_t> kept;
    int64_t depth = 1;
    std::vector<SmallVector<int64_t>> startsAt(order.size());
    for (int64_t m = 0; m < micros; ++m)
      if (live[m].first != SIZE_MAX)
        startsAt[live[m].first].push_back(m);
    for (size_t i = 0; i < order.size(); ++i) {
      for (int64_t m : startsAt[i]) {
        kept.insert(m);
        depth = std::max(depth, *kept.rbegin() - *kept.begin() + 1);
      }
      for (auto it = kept.begin(); it != kept.end();)
        it = live[*it].second <= i ? kept.erase(it) : std::next(it);
    }
    rings[v] = {depth, from, Value()};
  }
}

Value Emitter::constant(int64_t v) {
  Value &c = constants[v];
  if (!c) {
    OpBuilder::InsertionGuard guard(b);
    if (loop)
      b.setInsertionPointToStart(loop->body);
    auto type = RankedTensorType::get({}, b.getI64Type());
    c = ConstantOp::create(b, loc, DenseElementsAttr::get(type, {v}));
  }
  return c;
}

Value Emitter::microValue(int64_t at) {
  if (!loop)
    return constant(at);
  if (at == 0)
    return loop->offset;
  Value &m = loop->micros[at];
  if (!m)
    m = AddOp::create(b, loc, loop->offset, constant(at));
  return m;
}

Value Emitter::slotOf(int64_t at, int64_t depth) {
  if (depth >= micros)
    return microValue(at);
  if (!loop)
    return constant(at % depth);
  Value &s = loop->slots[{at, depth}];
  if (!s)
    s = RemOp::create(b, loc, microValue(at), constant(depth));
  return s;
}

Value Emitter::carried(Value key) {
  Value &v = current[key];
  if (loop && !llvm::is_contained(loop->keys, key)) {
    loop->keys.push_back(key);
    loop->inits.push_back(v);
    v = loop->body->addArgument(v.getType(), key.getLoc());
  }
  return v;
}

IRMapping *Emitter::directMap(int unit, int64_t at) {
  std::pair<unsigned, int64_t> key = {static_cast<unsigned>(unit), at};
  if (!loop) {
    auto it = outside.find(key);
    return it == outside.end() ? nullptr : &it->second;
  }
  auto it = loop->runOf.find(key);
  return it == loop->runOf.end() ? nullptr : &loop->maps[it->second];
}

Value Emitter::resolve(Value v, unsigned unit, int64_t at,
                       IRMapping &map) {
  if (Value m = map.lookupOrNull(v))
    return m;
  Value local;
  if (v == tmpl.index) {
    local = microValue(at);
    if (tmpl.indexStep != 1)
      local = MulOp::create(b, loc, local, constant(tmpl.indexStep));
    if (tmpl.indexStart != 0)
      local = AddOp::create(b, loc, local, constant(tmpl.indexStart));
  } else if (auto k = carriedIndex.find(v);
             k != carriedIndex.end() && !kept.contains({unit, k->second})) {
    local = carried(v);
  } else if (int from = producerOf(v); from < 0) {
    return v;
  } else if (IRMapping *d = directMap(from, at)) {
    local = d->lookup(v);
  } else if (auto it = rings.find(v); it != rings.end()) {
    Value slot = slotOf(at, it->second.depth);
    local = GatherOp::create(b, v.getLoc(), carried(it->second.key), slot, 0);
    spmd.setLayout(local, spmd.layoutOf(v));
  } else if (rematerializable(v)) {
    Operation *def = v.getDefiningOp();
    for (Value o : def->getOperands())
      resolve(o, unit, at, map);
    Operation *copy = b.clone(*def, map);
    for (auto [from, to] : llvm::zip(def->getResults(), copy->getResults()))
      spmd.setLayout(to, spmd.layoutOf(from));
    return map.lookup(v);
  } else {
    emitError(v.getLoc()) << "ober-partition: internal error: a value of "
                             "unit " << from << " is not available to unit "
                          << unit << " of micro-batch " << at;
    broken = true;
    return v;
  }
  map.map(v, local);
  return local;
}

void Emitter::emitRun(unsigned unit, int64_t at, IRMapping &map) {
  // The value before this run's update, for units that read it later.
  for (auto [k, key] : llvm::enumerate(tmpl.carried))
    if (updater[k] == static_cast<int>(unit) &&
        llvm::any_of(kept, [&, k = k](auto p) { return p.second == k; }))
      resolve(key, unit, at, map);
  for (Operation &op : *tmpl.units[unit]) {
    for (Value v : op.getOperands())
      resolve(v, unit, at, map);
    Operation *copy = b.clone(op, map);
    for (auto [from, to] : llvm::zip(op.getResults(), copy->getResults()))
      spmd.setLayout(to, spmd.layoutOf(from));
  }
  for (auto &[v, ring] : rings)
    if (ring.unit == unit) {
      Value slot = slotOf(at, ring.depth);
      Value r = carried(ring.key);
      current[ring.key] =
          ScatterOp::create(b, v.getLoc(), r, slot, map.lookup(v), 0);
    }
  for (auto [k, key] : llvm::enumerate(tmpl.carried))
    if (updater[k] == static_cast<int>(unit)) {
      carried(key);
      current[key] = map.lookup(tmpl.next[k]);
    }
}

void Emitter::emitLoop(const Segment &s) {
  Value zero = constant(0);
  Loop l;
  l.body = new Block();
  l.body->addArgument(b.getIndexType(), loc);
  l.offset = l.body->addArgument(zero.getType(), loc);
  l.maps.resize(s.length);
  DenseMap<int64_t, Value> outer;
  std::swap(outer, constants);
  loop = &l;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(l.body);
    for (size_t j = 0; j < s.length; ++j) {
      const UnitRun &run = order[s.start + j];
      emitRun(run.unit, run.micro, l.maps[j]);
      l.runOf[{run.unit, run.micro}] = j;
    }
    SmallVector<Value> next = {
        AddOp::create(b, loc, l.offset, constant(s.stride))};
    for (Value key : l.keys)
      next.push_back(current[key]);
    scf::YieldOp::create(b, loc, next);
  }
  loop = nullptr;
  std::swap(outer, constants);
  auto bound = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  SmallVector<Value> inits = {zero};
  llvm::append_range(inits, l.inits);
  auto f = scf::ForOp::create(b, loc, bound(0), bound(s.count), bound(1),
                              inits);
  Block *body = f.getBody();
  for (Operation &op : llvm::make_early_inc_range(*body))
    op.erase();
  for (auto [from, to] : llvm::zip(l.body->getArguments(), body->getArguments()))
    from.replaceAllUsesWith(to);
  body->getOperations().splice(body->end(), l.body->getOperations());
  delete l.body;
  for (auto [j, key] : llvm::enumerate(l.keys)) {
    Value result = f.getResult(1 + j);
    spmd.setLayout(result, spmd.layoutOf(l.inits[j]));
    spmd.setLayout(body->getArgument(2 + j), spmd.layoutOf(l.inits[j]));
    current[key] = result;
  }
}

FailureOr<SmallVector<Value>> Emitter::run() {
  unsigned n = tmpl.units.size();
  for (auto [u, block] : llvm::enumerate(tmpl.units))
    unitOfBlock[block] = u;
  for (auto [k, arg] : llvm::enumerate(tmpl.carried))
    carriedIndex[arg] = k;
  foreign.resize(n);
  readsCarried.resize(n);
  for (unsigned u = 0; u < n; ++u)
    for (Operation &op : *tmpl.units[u])
      for (Value v : op.getOperands()) {
        if (auto it = carriedIndex.find(v); it != carriedIndex.end())
          readsCarried[u].insert(it->second);
        int from = unitOf(v);
        if (from >= 0 && from != static_cast<int>(u))
          foreign[u].insert(v);
      }
  for (auto [k, next] : llvm::enumerate(tmpl.next)) {
    int from = unitOf(next);
    if (from < 0 && next != tmpl.carried[k])
      return emitError(loc) << "ober-partition: internal error: carried value "
                            << k << " is updated outside the micro-batch";
    updater.push_back(from);
  }
  for (auto [i, run] : llvm::enumerate(order)) {
    if (!position.try_emplace({run.unit, run.micro}, i).second)
      return emitError(loc) << "ober-partition: internal error: the schedule "
                               "runs unit " << run.unit << " of micro-batch "
                            << run.micro << " twice";
    micros = std::max(micros, run.micro + 1);
  }
  if (failed(keepCarriedReads()) || failed(check()))
    return failure();
  segments = segmentsOf(order);
  for (auto [i, s] : llvm::enumerate(segments))
    segmentAt.append(s.count * s.length, i);
  planRings();

  for (auto [k, key] : llvm::enumerate(tmpl.carried))
    current[key] = tmpl.initial[k];
  for (auto &[v, ring] : rings) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape = {ring.depth};
    llvm::append_range(shape, type.getShape());
    auto ringType = type.clone(shape);
    ring.key = ConstantOp::create(
        b, v.getLoc(), cast<DenseElementsAttr>(b.getZeroAttr(ringType)));
    current[ring.key] = ring.key;
  }
  for (const Segment &s : segments) {
    if (s.count > 1) {
      emitLoop(s);
      continue;
    }
    const UnitRun &run = order[s.start];
    emitRun(run.unit, run.micro, outside[{run.unit, run.micro}]);
  }
  if (broken)
    return failure();
  SmallVector<Value> finals;
  for (Value key : tmpl.carried)
    finals.push_back(current[key]);
  return finals;
}

} // namespace

FailureOr<SmallVector<Value>>
mlir::ober::partition::emitMicroBatches(OpBuilder &builder, Spmd &spmd,
                                        const MicroBatchTemplate &tmpl,
                                        ArrayRef<UnitRun> order,
                                        Location loc) {
  return Emitter(builder, spmd, tmpl, order, loc).run();
}
