import BoardwalkModel

/// A generated event waiting in the heap, with its insertion order to break ties.
struct Pending: Sendable {
    var event: Event
    var order: Int
    static func < (a: Pending, b: Pending) -> Bool {
        a.event.time.microseconds != b.event.time.microseconds
            ? a.event.time.microseconds < b.event.time.microseconds : a.order < b.order
    }
}

/// A binary min-heap of pending events, ordered by time then insertion order.
struct MinHeap: Sendable {
    private var items: [Pending] = []
    var isEmpty: Bool { items.isEmpty }
    var min: Pending? { items.first }

    mutating func insert(_ item: Pending) {
        items.append(item)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i] < items[parent] else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func popMin() -> Pending? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < items.count, items[l] < items[m] { m = l }
            if r < items.count, items[r] < items[m] { m = r }
            if m == i { break }
            items.swapAt(i, m)
            i = m
        }
        return top
    }
}
