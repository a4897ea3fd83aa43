import BoardwalkCodec

/// A raw buffer of fixed size; a builder replaces it with ``grown(to:)`` when it needs more room.
@usableFromInline
final class BlockStorage {
    // Constants, so that the builders' hot paths read them without dynamic exclusivity checks (a `var`
    // of a class costs a `swift_beginAccess` per access from another module: measured ~150 instructions
    // per appended event and builder). Growing makes a new storage instead.
    @usableFromInline let pointer: UnsafeMutableRawPointer
    @usableFromInline let capacity: Int

    @usableFromInline
    init(capacity: Int) {
        pointer = .allocate(byteCount: capacity, alignment: 16)
        self.capacity = capacity
    }

    /// A storage of at least `needed` bytes (doubling) holding a copy of this one's bytes.
    @usableFromInline
    func grown(to needed: Int) -> BlockStorage {
        var size = capacity
        while size < needed { size *= 2 }
        let new = BlockStorage(capacity: size)
        new.pointer.copyMemory(from: pointer, byteCount: capacity)
        return new
    }

    /// Copies `bytes` to `offset`, in this storage or in a grown one, and returns the storage holding them.
    @usableFromInline
    func copying(_ bytes: UnsafeRawBufferPointer, to offset: Int) -> BlockStorage {
        let storage = offset + bytes.count > capacity ? grown(to: offset + bytes.count) : self
        if let base = bytes.baseAddress { (storage.pointer + offset).copyMemory(from: base, byteCount: bytes.count) }
        return storage
    }

    deinit { pointer.deallocate() }
}
