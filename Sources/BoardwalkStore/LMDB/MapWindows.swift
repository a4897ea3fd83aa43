import Synchronization

/// What this process has done with each 64 KiB window of data.mdb's memory map: nothing yet, read a block in it
/// with `pread`, or touched it through the map. Shared by the transactions of one map (a new map after a resize
/// gets a new table).
///
/// Why: the first touch of a page of the map is a page fault, and on this kind of machine (a KVM guest) a fault on
/// a cached file page costs about 4–5 µs and maps the whole aligned 64 KiB window around it (the kernel's fault-around),
/// while `pread` of one 4 KiB block costs about 2 µs and maps nothing. A scan whose blocks lie one per window (an
/// onboarding's sealed blocks in a store as ingested are scattered through the file) reads faster with `pread`; a
/// scan whose blocks are neighbours (a compacted copy), or a window already mapped, reads faster through the map.
/// The table lets a scan tell which case a block is in (``Snapshot/forEachBlockRun(onboarding:screens:time:_:)``).
///
/// A window read with `pread` once is read through the map the next time, so a process that queries the same part
/// of the store again (a REPL) pays the faults once and then reads for free, as it did before.
///
/// `@unchecked Sendable`: the states are atomics (relaxed: a stale state only makes a scan choose the slower of
/// two correct ways to read a block), and the storage never moves nor changes size.
final class MapWindows: @unchecked Sendable {
    enum State: UInt64 {
        case untouched = 0
        case readOnce = 1
        case mapped = 2
    }

    /// log2 of the window size: the kernel's default `fault_around_bytes` (64 KiB).
    static let shift = 16
    /// Two bits per window, 32 windows per word.
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    /// Windows covered.
    let count: Int

    /// A table for a map of `mapSize` bytes, every window untouched.
    /// - Complexity: O(mapSize / 2 MiB): 8 bytes per 32 windows.
    init(mapSize: Int) {
        count = max(mapSize, 0) >> MapWindows.shift + 1
        let n = (count + 31) / 32
        words = .allocate(capacity: n)
        for i in 0..<n { (words + i).initialize(to: Atomic(0)) }
    }

    deinit {
        words.deinitialize(count: (count + 31) / 32)
        words.deallocate()
    }

    /// The state of window `window` (`.mapped` past the table: nothing to gain there).
    @inline(__always)
    func state(_ window: Int) -> State {
        guard window >= 0, window < count else { return .mapped }
        let bits = words[window >> 5].load(ordering: .relaxed) >> UInt64((window & 31) << 1) & 3
        return State(rawValue: bits) ?? .mapped
    }

    /// Raises window `window` to `state` (a state never goes back down).
    @inline(__always)
    func raise(_ window: Int, to state: State) {
        guard window >= 0, window < count else { return }
        let shift = UInt64((window & 31) << 1)
        let word = words[window >> 5].load(ordering: .relaxed)
        guard word >> shift & 3 < state.rawValue else { return }
        // Another thread may set a neighbour's bits meanwhile: OR keeps both (states only rise, and the OR of
        // readOnce and mapped is 3, read as mapped).
        words[window >> 5].bitwiseOr(state.rawValue << shift, ordering: .relaxed)
    }
}
