import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat
import Synchronization

/// The damaged event blocks that reads stepped over instead of stopping (``Snapshot/readingAroundDamage(_:)``):
/// each block once, with where it is and, where known, how many events it held.
///
/// One log may serve several read transactions (a query runs a few); a block met again is not counted again.
/// Thread-safe.
package final class DamagedBlocks: Sendable {
    /// One damaged block of `events` or the event log.
    package struct Block: Sendable, Equatable {
        /// The onboarding's id, or `nil` for the events without a position (or an onboarding the dictionary
        /// cannot name).
        package var onboarding: String?
        /// The store's number for the onboarding (``RecordFormat/noOnboarding`` for the events without a position).
        package var onboardingRef: UInt32
        /// The screen index of the block's group.
        package var screen: Int
        /// The seq of the block's first event (its key's).
        package var firstSeq: UInt64
        /// The time of the block's first event (its key's).
        package var from: Timestamp
        /// The time of its last event, from its header; `nil` when the header does not decode as a block's.
        package var to: Timestamp?
        /// The events its header counts; `nil` when the header does not decode as a block's. The header lies in
        /// the bytes that failed their check, so the count is what the block most likely held, not a certainty.
        package var headerCount: Int?
        /// The events of the block that a session read asked for and could not read (known from the session
        /// index, which is stored apart).
        package var referencesSkipped: Int
        /// Why the block is not read (the store's message).
        package var reason: String
    }

    private let state = Mutex<[Block]>([])

    /// An empty log.
    package init() {}

    /// The blocks stepped over so far, in the order they were met.
    package var blocks: [Block] { state.withLock { $0 } }

    /// Records the block stored under `key` as damaged (once).
    func record(_ key: EventKey, _ value: UnsafeRawBufferPointer, _ error: StoreError, onboarding: String?) {
        let header = DamagedBlocks.header(key, value)
        let from = key.time
        state.withLock { blocks in
            guard !blocks.contains(where: { $0.matches(key) }) else { return }
            blocks.append(
                Block(
                    onboarding: onboarding, onboardingRef: key.onboarding, screen: Int(key.screen),
                    firstSeq: key.seq, from: from,
                    to: header.map { Timestamp(microseconds: from.microseconds + $0.span) },
                    headerCount: header.map(\.count), referencesSkipped: 0, reason: error.message))
        }
    }

    /// Counts one event that a session read could not read because it lies in a damaged block recorded before,
    /// of `onboarding` and `screen`, that starts at or before (`time`, `seq`) and less than a block span earlier.
    /// - Returns: whether such a block was recorded (the event is then skipped, else it is missing for another
    ///   reason).
    func skipReference(onboarding: UInt32, screen: UInt16, time: Int64, seq: UInt64) -> Bool {
        state.withLock { blocks in
            let candidates = blocks.indices.filter { i in
                let b = blocks[i]
                let t = b.from.microseconds
                return b.onboardingRef == onboarding && b.screen == Int(screen)
                    && (t < time || (t == time && b.firstSeq <= seq)) && time - t < Layout.blockSpan
            }
            // The latest such block is the one a non-overlapping group keeps the event in.
            guard let i = candidates.max(by: { blocks[$0].from < blocks[$1].from }) else { return false }
            blocks[i].referencesSkipped += 1
            return true
        }
    }

    /// The count and time span a damaged block's header gives: exact when the header's own checksum holds (the damage
    /// is behind it), else when they are plausible (a count no larger than the bytes, a span within a block's), read
    /// past the checksums without trusting them.
    private static func header(_ key: EventKey, _ value: UnsafeRawBufferPointer) -> (count: Int, span: Int64)? {
        // A header whose own checksum holds (the damage is in the events) gives its exact figures.
        if let header = try? blockHeader(key, value) { return (header.count, header.lastTime - key.time.microseconds) }
        var offset = EventBlockReader.headerStart
        func varint() -> UInt64? {
            var result: UInt64 = 0, shift: UInt64 = 0
            while offset < value.count, shift < 64 {
                let byte = value[offset]
                offset += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
            return nil
        }
        guard let count = varint(), count >= 1, count <= UInt64(value.count), let span = varint(),
            span < UInt64(Layout.blockSpan)
        else { return nil }
        return (Int(count), Int64(span))
    }
}

extension DamagedBlocks.Block {
    func matches(_ key: EventKey) -> Bool {
        onboardingRef == key.onboarding && screen == Int(key.screen) && firstSeq == key.seq
    }

    /// The events known lost: the session references skipped, or the header's count when larger (a scan reads
    /// every event of a block, a session read only those it asks for).
    package var eventsSkipped: Int? {
        if let headerCount { return max(headerCount, referencesSkipped) }
        return referencesSkipped > 0 ? referencesSkipped : nil
    }
}

extension Snapshot {
    /// This snapshot, reading around damaged event blocks: the scans by onboarding and time
    /// (``forEachRun(onboarding:screens:time:_:)``, ``forEachBlockRun(onboarding:screens:time:_:)``,
    /// ``forEachBlock(onboarding:screens:time:_:)``) and the batched session reads (``forEachSession``) step over a
    /// block that fails its checksum or does not decode, record it in `log`, and go on, instead of throwing.
    ///
    /// Damage that is not a block's (LMDB's pages, the string dictionary, the session index) still throws. A
    /// record that does not decode inside a block that passed its checksum still throws: the block was written so.
    package func readingAroundDamage(_ log: DamagedBlocks) -> Snapshot {
        var copy = self
        copy.damaged = log
        return copy
    }

    /// A reader over the block stored under `key`, or `nil` when the block is damaged and this snapshot reads
    /// around damage (the block is then recorded).
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` for a damaged block, unless reading around it.
    @inline(__always)
    func openBlock(_ key: EventKey, _ value: UnsafeRawBufferPointer) throws -> EventBlockReader? {
        guard let damaged else { return try blockReader(key, value) }
        do {
            return try blockReader(key, value)
        } catch let error as StoreError where error.kind == .corrupt {
            let onboarding = key.onboarding == RecordFormat.noOnboarding ? nil : string(for: key.onboarding)
            damaged.record(key, value, naming(error), onboarding: onboarding)
            return nil
        }
    }
}

extension Store {
    /// ``read(_:)`` with a snapshot that reads around damaged event blocks (``Snapshot/readingAroundDamage(_:)``),
    /// recording them in `log`. The first block stepped over marks the store damaged, as a read that stops at it
    /// does: appends refuse the store until it is checked or salvaged.
    /// - Throws: as ``read(_:)``, for damage that is not a block's.
    package func read<R>(aroundDamage log: DamagedBlocks, _ body: (Snapshot) throws -> R) throws -> R {
        let result = try read { snapshot in try body(snapshot.readingAroundDamage(log)) }
        if let first = log.blocks.first, damageFound == nil { markDamaged(StoreError(.corrupt, first.reason)) }
        return result
    }
}
