import BoardwalkModel

extension EventIDRef {
    /// The reference the encoder writes for event id `id`: its 128 bits and letter case when it is a
    /// canonical UUID, otherwise the id interned through `strings` (as ``RecordEncoder`` does).
    ///
    /// Two events have equal references exactly when their id strings are equal (within one dictionary),
    /// so a store can compare ids of new events with stored ones without making `String`s.
    @inlinable
    public init<I: StringInterner>(interning id: String, strings: inout I) throws {
        if let (hi, lo, upper) = parseUUID(id) {
            self = .uuid(high: hi, low: lo, uppercase: upper)
        } else {
            self = .string(try RecordEncoder.intern(id, &strings))
        }
    }
}
