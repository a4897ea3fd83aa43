import BoardwalkModel

/// A reference to a string in a string dictionary.
///
/// Records never hold string bytes: every string field is a `StringID` into a dictionary the caller owns
/// (the store's string database, a batch file's string table). Ids are `0..<UInt32.max`; `UInt32.max`
/// is reserved (``RecordFormat/absent``) and is never a valid id.
public typealias StringID = UInt32

/// Turns strings into ids on encode.
///
/// The encoder calls ``intern(_:)`` once per string field of an event (six to fifteen times for typical
/// events), so an implementation should answer repeated strings from memory. The store implements it
/// over its string database with an in-memory cache; ``StringTable`` is the in-memory implementation
/// that batch files use.
public protocol StringInterner {
    /// Returns the id of `string`, assigning a new one if the string has none yet.
    ///
    /// The same string must always get the same id, and different strings different ids, for as long as
    /// records encoded with this interner are decoded with its matching ``StringResolver``.
    /// - Returns: an id in `0..<UInt32.max`; returning `UInt32.max` makes the encoder throw.
    /// - Throws: whatever the backing storage throws; the encoder rethrows it unchanged.
    mutating func intern(_ string: String) throws -> StringID

    /// Returns the id of the string stored at `string`, like ``intern(_:)``.
    ///
    /// The encoder's hot path calls this one with a pointer into the caller's `Event`, so that an
    /// implementation can answer a repeated string from its 16-byte representation without loading the
    /// `String` (a load retains its storage, and the release follows). The default implementation loads
    /// the string and calls ``intern(_:)``.
    /// - Parameter string: a valid, initialized `String`, alive and unchanged for the duration of the call.
    mutating func intern(at string: UnsafePointer<String>) throws -> StringID
}

extension StringInterner {
    /// Loads the string and calls ``intern(_:)``.
    @inlinable
    public mutating func intern(at string: UnsafePointer<String>) throws -> StringID {
        try intern(string.pointee)
    }
}

/// Turns ids back into strings on owned decode.
///
/// ``RecordView`` never resolves ids; only ``RecordView/event(strings:)`` does. A resolver backed by an
/// array of `String`s makes owned decoding a retain per string field rather than an allocation.
public protocol StringResolver {
    /// The string with id `id`, or `nil` if the dictionary has no such id.
    func string(for id: StringID) -> String?
}

extension Array: StringResolver where Element == String {
    /// The element at index `id`, or `nil` when `id` is out of bounds.
    @inlinable
    public func string(for id: StringID) -> String? {
        let i = Int(id)
        return i < count ? self[i] : nil
    }
}
