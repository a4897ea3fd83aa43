import BoardwalkModel

/// A generated event waiting in the heap, with its insertion order to break ties.
struct Pending: Sendable {
    var event: Event
    var order: Int
}

/// A binary min-heap of pending events, ordered by time then insertion order.
///
/// The heap orders small entries (time, order, slot) and the events stay where they were put until they are popped:
/// moving an event within an array copies it (a retain and a release of every string it holds), which made the heap
/// half of the generator's instructions.
struct MinHeap: Sendable {
    private var entries: [(time: Int64, order: Int, slot: Int)] = []
    private var storage: [Pending?] = []
    private var freeSlots: [Int] = []
    var isEmpty: Bool { entries.isEmpty }
    /// The time of the earliest pending event.
    var minTime: Int64? { entries.first?.time }

    @inline(__always)
    private func less(_ i: Int, _ j: Int) -> Bool {
        entries[i].time != entries[j].time ? entries[i].time < entries[j].time : entries[i].order < entries[j].order
    }

    mutating func insert(_ item: Pending) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            storage[slot] = item
        } else {
            slot = storage.count
            storage.append(item)
        }
        entries.append((item.event.time.microseconds, item.order, slot))
        var i = entries.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard less(i, parent) else { break }
            entries.swapAt(i, parent)
            i = parent
        }
    }

    mutating func popMin() -> Pending? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let slot = entries.removeLast().slot
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < entries.count, less(l, m) { m = l }
            if r < entries.count, less(r, m) { m = r }
            if m == i { break }
            entries.swapAt(i, m)
            i = m
        }
        freeSlots.append(slot)
        return storage[slot].take()
    }
}
