import BoardwalkCodec
import BoardwalkModel
import BoardwalkStoreFormat

// Reading the store's values: block keys and event blocks (the session index's are in SessionIndex.swift), with
// LMDB-independent damage turned into `StoreError(.corrupt)` that names the key and carries the codec's error
// (offset and reason).

/// Decodes an `events` key.
@inline(__always)
func decodeBlockKey(_ bytes: UnsafeRawBufferPointer) throws -> EventKey {
    guard let key = EventKey(bytes) else {
        throw StoreError(.corrupt, "an events key is \(bytes.count) bytes, not \(Layout.eventKeySize)")
    }
    return key
}

/// A reader over the block stored under `key`.
@inline(__always)
func blockReader(_ key: EventKey, _ value: UnsafeRawBufferPointer) throws -> EventBlockReader {
    do {
        return try EventBlockReader(
            value, firstTime: Layout.time(fromBits: key.timeBits), firstSeq: key.seq, checksumSeed: key.checksumSeed)
    } catch {
        throw undecodableBlock(key, error)
    }
}

/// The header of the block stored under `key`, its own checksum checked (not the block's).
/// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the header does not decode or its checksum does not
///   match.
func blockHeader(_ key: EventKey, _ value: UnsafeRawBufferPointer) throws -> EventBlockHeader {
    do {
        return try EventBlockHeader(
            value, firstTime: Layout.time(fromBits: key.timeBits), firstSeq: key.seq, checksumSeed: key.checksumSeed)
    } catch {
        throw undecodableBlock(key, error)
    }
}

/// The header of the block stored under `key`, from its head in `block_heads` (its own checksum checked).
/// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` when the head does not decode, holds bytes past the
///   header, or its checksum does not match.
func blockHead(_ key: EventKey, _ value: UnsafeRawBufferPointer) throws -> EventBlockHeader {
    do {
        return try EventBlockHeader(
            head: value, firstTime: Layout.time(fromBits: key.timeBits), firstSeq: key.seq,
            checksumSeed: key.checksumSeed)
    } catch {
        throw undecodableBlock(key, error, head: true)
    }
}

/// Moves `block` (stored under `key`) to its next event.
@inline(__always)
func advance(_ block: inout EventBlockReader, _ key: EventKey) throws -> Bool {
    do {
        return try block.next()
    } catch {
        throw undecodableBlock(
            seq: key.seq, onboarding: key.onboarding, screen: key.screen, firstTime: block.firstTime, error)
    }
}

/// ``undecodableBlock(seq:onboarding:screen:firstTime:_:head:)`` for the block stored under `key`.
func undecodableBlock(_ key: EventKey, _ error: CodecError, head: Bool = false) -> StoreError {
    undecodableBlock(
        seq: key.seq, onboarding: key.onboarding, screen: key.screen, firstTime: Layout.time(fromBits: key.timeBits),
        error, head: head)
}

/// The error for the block stored under the key (`seq`, `onboarding`, `screen`, `firstTime`) that does not decode,
/// or whose checksum does not match: where it is, and that its events are not read; with `head`, for the block's
/// entry in `block_heads`.
@usableFromInline
func undecodableBlock(
    seq: UInt64, onboarding: UInt32, screen: UInt16, firstTime: Int64, _ error: CodecError, head: Bool = false
) -> StoreError {
    let from = Timestamp(microseconds: firstTime)
    let place =
        (head ? "the block_heads entry of " : "")
        + "the block at seq \(seq) (\(StoreError.group(onboarding, screen)), events from \(from))"
    var e =
        if case .checksumMismatch = error.reason {
            StoreError(
                .corrupt,
                "\(place) is damaged: its bytes changed after they were written"
                    + (head ? "" : ", and its events are not read"),
                underlying: error)
        } else {
            StoreError(.corrupt, "\(place) does not decode", underlying: error)
        }
    e.onboardingRef = onboarding
    return e
}

/// The error for the record of event `seq` (in the group of `onboarding` and `screen`) that does not decode.
@usableFromInline
func undecodableRecord(seq: UInt64, onboarding: UInt32, screen: UInt16, _ error: CodecError) -> StoreError {
    var e = StoreError(
        .corrupt, "event seq \(seq) (\(StoreError.group(onboarding, screen))) does not decode",
        underlying: storedRecordError(error))
    e.onboardingRef = onboarding
    return e
}

/// A codec error met in a record the store holds, in the store's words: a record whose tag names another format
/// version than the one the store writes is damaged (every record of a store is written by one version), so the
/// codec's "unsupported format version 3 (this reader knows version 1)", which suggests a newer reader, becomes an
/// invalid tag.
func storedRecordError(_ error: CodecError) -> CodecError {
    guard case .unsupportedVersion(let version) = error.reason else { return error }
    return CodecError(
        offset: error.offset,
        reason: .invalidValue(
            field: "record tag: its version bits, which every record of this store has as \(RecordFormat.version), are",
            value: Int64(version)))
}

/// The record of `block`'s current event.
@inline(__always)
func recordView(_ key: EventKey, _ block: EventBlockReader, stringLimit: StringID = RecordFormat.absent) throws
    -> RecordView
{
    do {
        let header = RecordHeader(
            time: Timestamp(microseconds: block.time), keyOnboarding: key.onboarding, keyScreenIndex: key.screen)
        return try RecordView(body: block.body, header: header, stringLimit: stringLimit)
    } catch {
        throw undecodableRecord(seq: block.seq, onboarding: key.onboarding, screen: key.screen, error)
    }
}

/// Whether (t1, s1) < (t2, s2).
@inline(__always)
func precedes(_ t1: Int64, _ s1: UInt64, _ t2: Int64, _ s2: UInt64) -> Bool {
    t1 < t2 || (t1 == t2 && s1 < s2)
}

extension Int64 {
    /// `self - d`, or `Int64.min` when that overflows.
    @inline(__always) func minusSaturating(_ d: Int64) -> Int64 {
        let (r, o) = subtractingReportingOverflow(d)
        return o ? .min : r
    }
}
