/// Values by slot in one growable allocation, mutated in place through ``base`` (an `Array` element reached
/// from inside a scan's closure is copied out and back, and checked for exclusive access, on every event).
///
/// The allocation starts on a 64-byte cache line, so a value whose stride is a multiple of 64 (``LeanFold``) keeps
/// each of its lines' fields on one line (a large `malloc` block starts 16 bytes into a page); one of 4 MiB or more on
/// a 2 MiB boundary, backed by huge pages where the kernel gives them.
final class SlotStorage<Element> {
    @exclusivity(unchecked) private(set) var base: UnsafeMutablePointer<Element>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = SlotStorage.allocate(self.capacity)
    }

    /// A large allocation starts on a 2 MiB boundary and asks for huge pages (``adviseHugePages(_:byteCount:)``).
    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        let byteCount = capacity * MemoryLayout<Element>.stride
        let large = byteCount >= 4 << 20
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: byteCount, alignment: large ? 2 << 20 : max(64, MemoryLayout<Element>.alignment))
        if large { adviseHugePages(raw, byteCount: byteCount) }
        return raw.bindMemory(to: Element.self, capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Appends `value` and returns its slot.
    func append(_ value: Element) -> Int {
        if count == capacity { grow(to: capacity * 2) }
        (base + count).initialize(to: value)
        count += 1
        return count - 1
    }

    /// Appends `n` copies of `value` (one growth, and no copy call per element for a large value).
    func append(_ value: Element, count n: Int) {
        guard n > 0 else { return }
        if count + n > capacity { grow(to: max(capacity * 2, count + n)) }
        prefault(UnsafeMutableRawPointer(base + count), byteCount: n * MemoryLayout<Element>.stride)
        (base + count).initialize(repeating: value, count: n)
        count += n
    }

    private func grow(to newCapacity: Int) {
        let bigger = SlotStorage.allocate(newCapacity)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
        capacity = newCapacity
    }
}
