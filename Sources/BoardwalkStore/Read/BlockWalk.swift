import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

/// The state of a walk over the blocks of `events` for references in event-key order: the block the last
/// reference was found in, its reader on that event, and the key of the block after it, under the cursor.
struct BlockWalk {
    var key = EventKey(onboarding: 0, screen: 0, timeBits: 0, seq: 0)
    var reader: EventBlockReader? = nil
    /// The reader is on an event (its `time` and `seq` are that event's); false before the block's first.
    var onEvent = false
    /// The reader is past the block's last event.
    var exhausted = false
    /// The key under the cursor: the block after `key` in key order (`nil`: no block after it). Meaningful only
    /// while `reader` is set.
    var ahead: EventKey? = nil

    /// How many blocks the walk steps over with the cursor before it seeks instead.
    static let maxSteps = 8

    /// The record body of the event `ref` points to.
    mutating func find(_ ref: KeyedRef, _ c: inout BlockCursor, _ snapshot: Snapshot) throws -> UnsafeRawBufferPointer {
        let onboarding = UInt32(truncatingIfNeeded: ref.group >> 16), screen = UInt16(truncatingIfNeeded: ref.group)
        let target = EventKey(onboarding: onboarding, screen: screen, timeBits: Layout.timeBits(ref.time), seq: ref.seq)
        // The block that holds the event, when blocks do not overlap: the last one whose key is at or before it.
        var placed = false
        if reader != nil, key.onboarding == onboarding, key.screen == screen, key <= target {
            var steps = 0
            while let next = ahead, next <= target, steps < BlockWalk.maxSteps {
                try enter(next, c.value, snapshot)
                ahead = try c.next() ? try decodeBlockKey(c.key) : nil
                steps += 1
            }
            placed = !(ahead.map { $0 <= target } ?? false)
        }
        if !placed { try seek(target, &c, snapshot) }
        if reader != nil, key.onboarding == onboarding, key.screen == screen, let body = try walk(to: ref) {
            return body
        }
        // Not there: blocks of the group overlap in time (a late batch), or the index is wrong. `locate` looks
        // at every earlier block that can hold the event.
        guard
            let (found, block) = try snapshot.locate(
                &c, onboarding: onboarding, screen: screen, time: ref.time, seq: ref.seq)
        else {
            reader = nil
            // Reading around damage: an event of a damaged block stepped over is skipped (an empty body).
            if let damaged = snapshot.damaged,
                damaged.skipReference(onboarding: onboarding, screen: screen, time: ref.time, seq: ref.seq)
            {
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            throw StoreError(.corrupt, "the session index lists seq \(ref.seq), which is not in events or event_log")
        }
        key = found
        reader = block
        onEvent = true
        exhausted = false
        ahead = try c.next() ? try decodeBlockKey(c.key) : nil
        return block.body
    }

    /// Makes the block under `key` with bytes `value` the walk's block, before its first event (no block when it is
    /// damaged and `snapshot` reads around damage).
    @inline(__always)
    private mutating func enter(_ key: EventKey, _ value: UnsafeRawBufferPointer, _ snapshot: Snapshot) throws {
        self.key = key
        reader = try snapshot.openBlock(key, value)
        onEvent = false
        exhausted = false
    }

    /// Positions the walk on the last block whose key is at or before `target` (if any), the cursor on the one
    /// after it.
    private mutating func seek(_ target: EventKey, _ c: inout BlockCursor, _ snapshot: Snapshot) throws {
        reader = nil
        var found = try c.seek(target)
        if found {
            let key = try decodeBlockKey(c.key)
            if key == target {
                try enter(key, c.value, snapshot)
                ahead = try c.next() ? try decodeBlockKey(c.key) : nil
                return
            }
            found = try c.previous()
        } else {
            found = try c.last()
        }
        guard found else { return }
        let key = try decodeBlockKey(c.key)
        guard key.onboarding == target.onboarding, key.screen == target.screen else { return }
        try enter(key, c.value, snapshot)
        ahead = try c.next() ? try decodeBlockKey(c.key) : nil
    }

    /// Walks the block forward to the event `ref` points to; `nil`, leaving the reader on the first event after
    /// it, when the block does not hold it.
    private mutating func walk(to ref: KeyedRef) throws -> UnsafeRawBufferPointer? {
        guard !exhausted, var block = reader else { return nil }
        if onEvent && !precedes(block.time, block.seq, ref.time, ref.seq) {
            return block.time == ref.time && block.seq == ref.seq ? block.body : nil
        }
        // Past the block's time span or outside its seq range: not in it (and nothing to walk).
        guard block.lastTime >= ref.time, block.minSeq <= ref.seq, ref.seq <= block.maxSeq else { return nil }
        while try advance(&block, key) {
            if precedes(block.time, block.seq, ref.time, ref.seq) { continue }
            reader = block
            onEvent = true
            return block.time == ref.time && block.seq == ref.seq ? block.body : nil
        }
        reader = block
        exhausted = true
        return nil
    }
}
