import BoardwalkCodec
import BoardwalkModel

/// The writer's memory of which (onboarding, session) pairs are in `onboarding_sessions`: a fixed array of
/// 2^19 pairs (4 MiB) indexed by the session id's low bits. A hit (the slot holds exactly the pair) means the
/// pair is stored, answered with one load; a miss only means "not known here".
///
/// Session ids are dense in first-seen order, so the sessions in flight are a window of recent ids: with
/// fewer than 2^19 ids between the oldest session in flight and the newest string, each session has a slot
/// of its own, and a session's events after its first find its pair there. (The `Set` of every pair it
/// replaces cost a SipHash insert per event with 100 000 sessions in flight, and grew to a million pairs.)
/// A session whose slot a later id took, or a session in a second onboarding (one pair per slot), misses:
/// its pair goes to `onboarding_sessions` again, which finds it (a seek and one chunk decoded).
///
/// Invariant: a slot only holds a pair that is stored (committed, or written by the running transaction);
/// the writer forgets the pairs of a refused batch or an aborted transaction.
struct SessionPairFilter {
    static let defaultBits = 19
    /// Each slot holds the complement of its pair, so that an all-zero array is empty: `~0` would be the pair
    /// (0xFFFF_FFFF, 0xFFFF_FFFF), and session id 0xFFFF_FFFF is the codec's "absent", never a session.
    private var slots: [UInt64]
    /// Slots - 1 (a power of two less one; the slot of a pair is its session id's low bits).
    private let mask: Int

    /// An empty filter of 2^`bits` slots, allocated on the first ``note(_:)``.
    init(bits: Int = SessionPairFilter.defaultBits) {
        slots = []
        mask = 1 << bits - 1
    }

    @inline(__always)
    private func slot(_ pair: UInt64) -> Int {
        Int(truncatingIfNeeded: pair) & mask
    }

    /// Whether `pair` is known to be stored.
    @inline(__always)
    func contains(_ pair: UInt64) -> Bool {
        slots.withUnsafeBufferPointer { s in s.count != 0 && s[slot(pair)] == ~pair }
    }

    /// Remembers `pair`, which is stored or is being written by the running batch (it replaces its slot's pair).
    @inline(__always)
    mutating func note(_ pair: UInt64) {
        if slots.isEmpty { allocate() }
        let i = slot(pair)
        slots.withUnsafeMutableBufferPointer { s in s[i] = ~pair }
    }

    /// Out of line: kept out of the append loop, where a larger body made the optimizer stop specializing the
    /// encoder's call (about 115 more instructions per event, measured).
    @inline(never)
    private mutating func allocate() {
        slots = [UInt64](repeating: 0, count: mask + 1)
    }

    /// Forgets `pair` if its slot holds it.
    mutating func forget(_ pair: UInt64) {
        let i = slot(pair)
        if !slots.isEmpty && slots[i] == ~pair { slots[i] = 0 }
    }
}
