import BoardwalkModel

extension EventIDRef {
    /// The reference the encoder writes for event id `id`: its 128 bits and letter case when it is a
    /// canonical UUID, otherwise the id interned through `strings` (as ``RecordEncoder`` does).
    ///
    /// Two events have equal references exactly when their id strings are equal (within one dictionary),
    /// so a store can compare ids of new events with stored ones without making `String`s.
    @inlinable
    package init<I: StringInterner>(interning id: String, strings: inout I) throws {
        if let (hi, lo, upper) = parseUUID(id) {
            self = .uuid(high: hi, low: lo, uppercase: upper)
        } else {
            self = .string(try RecordEncoder.intern(id, &strings))
        }
    }
}

extension EventIDRef {
    /// ``init(interning:strings:)`` for the id stored at `id`, read in place: the UUID is parsed from the string's
    /// bytes where they are, and any other id goes through ``StringInterner/intern(at:)``, so a store checking
    /// every event's id for duplicates does not load (retain and release) the string to do it.
    /// - Parameter id: a valid, initialized `String`, alive and unchanged for the duration of the call.
    @inlinable @inline(__always)
    package init<I: StringInterner>(interningAt id: UnsafePointer<String>, strings: inout I) throws {
        if let (hi, lo, upper) = parseUUID(at: id) {
            self = .uuid(high: hi, low: lo, uppercase: upper)
        } else {
            self = .string(try RecordEncoder.intern(at: id, &strings))
        }
    }
}

/// ``parseUUID(_:)`` for the string stored at `s`, read in place.
@inlinable @inline(__always)
func parseUUID(at s: UnsafePointer<String>) -> (hi: UInt64, lo: UInt64, upper: Bool)? {
    guard s.pointee.utf8.count == 36 else { return nil }
    if let r = s.pointee.utf8.withContiguousStorageIfAvailable({ parseUUID(UnsafeRawBufferPointer($0)) }) { return r }
    return parseUUID(s.pointee)
}
