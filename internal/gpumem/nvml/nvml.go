package nvml
