import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

/// The events of one block that a scan hands out next, in (time, seq) order (``Snapshot/forEachRun(onboarding:screens:time:_:)``):
/// read them with ``next()``. Valid only inside the scan callback that received it.
@usableFromInline
package struct EventRun {
    @usableFromInline var reader: EventBlockReader
    @usableFromInline let blockSeq: UInt64
    /// The group of the run's block: the onboarding and screen of its key (``RecordFormat/noOnboarding`` and
    /// ``RecordFormat/noScreen`` for the events without a position).
    @usableFromInline package let onboarding: StringID
    @usableFromInline package let screen: UInt16
    /// The scan's time range `lo..<hi` (no upper bound unless `bounded`).
    @usableFromInline let lo: Int64
    @usableFromInline let hi: Int64
    @usableFromInline let bounded: Bool
    /// The run ends before the first event at or after (boundTime, boundSeq): another block's.
    @usableFromInline let boundTime: Int64
    @usableFromInline let boundSeq: UInt64
    @usableFromInline let stringLimit: StringID
    /// Whether the reader's current event has not been handed out yet (true at the start of a run).
    @usableFromInline var pending = true
    /// The block has no events left.
    @usableFromInline var blockDone = false
    /// An event at or past the range's end was reached: the scan of the group is over.
    @usableFromInline var pastEnd = false
    /// The run is over (the next event belongs to another run, the block ended, or the range did).
    @usableFromInline var ended = false

    @usableFromInline
    init(
        reader: EventBlockReader, blockSeq: UInt64, onboarding: StringID, screen: UInt16, lo: Int64, hi: Int64,
        bounded: Bool, boundTime: Int64, boundSeq: UInt64, stringLimit: StringID
    ) {
        self.reader = reader
        self.blockSeq = blockSeq
        self.onboarding = onboarding
        self.screen = screen
        self.lo = lo
        self.hi = hi
        self.bounded = bounded
        self.boundTime = boundTime
        self.boundSeq = boundSeq
        self.stringLimit = stringLimit
    }

    /// The run's next event in the scan's time range, or `nil` at the end of the run.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the block does not decode.
    @inlinable @inline(__always)
    package mutating func next() throws -> EventRecord? {
        while !ended {
            if !pending {
                let more: Bool
                do throws(CodecError) {
                    more = try reader.next()
                } catch {
                    throw undecodableBlock(
                        seq: blockSeq, onboarding: onboarding, screen: screen, firstTime: reader.firstTime, error)
                }
                guard more else {
                    blockDone = true
                    ended = true
                    return nil
                }
                // The next event belongs to another run when it does not come before the bound.
                guard reader.time < boundTime || (reader.time == boundTime && reader.seq < boundSeq) else {
                    ended = true
                    return nil
                }
            }
            pending = false
            let t = reader.time
            if bounded && t >= hi {
                pastEnd = true
                ended = true
                return nil
            }
            if t >= lo {
                return EventRecord(
                    seq: reader.seq, time: t, onboarding: onboarding, screen: screen, body: reader.body,
                    stringLimit: stringLimit)
            }
        }
        return nil
    }
}
