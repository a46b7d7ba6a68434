package memory

// Session samples one server process tree.
type Session interface {
	// Window opens a measurement window now; windows may overlap (concurrent requests).
	Window() Window
	// Stop ends sampling and releases what the session holds; it may be called twice.
	Stop()
}

// Window is one phase of a server's life: its load, or one request in flight.
type Window interface {
	// End closes the window and returns the peaks of the samples taken inside it.
	End() Peaks
}

// Peaks is what a window measured.
type Peaks struct {
	// MiB maps a source label to the peak in MiB: nvml_process (the server's process tree,
	// summed over GPUs), nvml_device (every GPU's used memory, summed), host_anon (RssAnon of
	// the tree) and, with several GPUs, the same per GPU as nvml_process:I and nvml_device:I.
	// A source that could not be measured is left out, never zero; Notes says why.
	MiB map[string]float64
	// Notes explain every source left out or degraded (no driver, no permission, ...).
	Notes []string
	// Samples is how many samples fell inside the window.
	Samples int
}
