/**
 * Parsing of the /proc/PID/smaps and /proc/PID/maps formats (proc(5); fs/proc/task_mmu.c), for importing a real
 * process into the host model.
 */
package dev.rnicsim.pagetable.proc;
