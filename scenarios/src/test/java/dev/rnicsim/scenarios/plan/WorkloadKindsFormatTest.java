package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The ODP, implicit and GPU fields of a workload, and their errors as {@code file:line: field: expected ...}. */
class WorkloadKindsFormatTest
{
    private static final String BASE = """
        groups:
          - name: a
            count: 1
            size: 64M
        %s""";

    private static Workload parse(final String extra)
    {
        return Workload.parse("w.yaml", BASE.formatted(extra));
    }

    @Test
    void shouldReadOdpImplicitAndGpuGroups()
    {
        final Workload w = Workload.parse("w.yaml", """
            groups:
              - name: odp
                count: 1
                size: 1G
                access: lw,odp
              - name: all
                count: 1
                size: 8G
                access: lw,odp
                implicit: true
              - name: weights
                count: 2
                size: 64M
                backing: gpu
                gpu: peer-memory
              - name: acts
                count: 2
                size: 64M
                backing: gpu
            """);
        assertThat(w.groups().get(0).onDemand()).isTrue();
        assertThat(w.groups().get(0).implicit()).isFalse();
        assertThat(w.groups().get(1).implicit()).isTrue();
        assertThat(w.groups().get(2).gpu()).isEqualTo("peer-memory");
        assertThat(w.groups().get(3).gpu()).as("dma-buf by default").isEqualTo("dmabuf");
        assertThat(w.groups().get(3).onDemand()).isFalse();
    }

    @Test
    void shouldRefuseImplicitWithoutOdpNamingTheLineAndField()
    {
        assertThatThrownBy(() -> parse("    implicit: true\n"))
            .hasMessage("w.yaml:5: groups[0].implicit: expected access with odp (an implicit MR is an ODP MR), got "
                + "access 'lw'");
    }

    @Test
    void shouldRefuseAnImplicitValueThatIsNotABoolean()
    {
        assertThatThrownBy(() -> parse("    access: odp\n    implicit: maybe\n"))
            .hasMessage("w.yaml:6: groups[0].implicit: expected true or false, got 'maybe'");
    }

    @Test
    void shouldRefuseImplicitWithHugetlbOrAnIova()
    {
        assertThatThrownBy(() -> parse("    access: odp,hugetlb\n    implicit: true\n"))
            .hasMessageStartingWith("w.yaml:6: groups[0].implicit: expected no hugetlb access and no iovaAlign");
        assertThatThrownBy(() -> parse("    access: odp\n    implicit: true\n    iovaAlign: 4K\n"))
            .hasMessageStartingWith("w.yaml:6: groups[0].implicit: expected no hugetlb access and no iovaAlign");
    }

    @Test
    void shouldRefuseHugetlbAccessWithoutOdp()
    {
        assertThatThrownBy(() -> parse("    access: lw,hugetlb\n"))
            .hasMessageStartingWith("w.yaml:5: groups[0].access: expected hugetlb only with odp");
    }

    @Test
    void shouldRefuseAGpuPathWithoutGpuBackingOrAnUnknownOne()
    {
        assertThatThrownBy(() -> parse("    gpu: dmabuf\n"))
            .hasMessage("w.yaml:5: groups[0].gpu: expected peer-memory or dmabuf with backing gpu, got 'dmabuf' with "
                + "backing 4k");
        assertThatThrownBy(() -> parse("    backing: gpu\n    gpu: nvlink\n"))
            .hasMessageStartingWith("w.yaml:6: groups[0].gpu: expected peer-memory or dmabuf");
    }

    @Test
    void shouldRefuseOdpOnGpuMemory()
    {
        assertThatThrownBy(() -> parse("    backing: gpu\n    access: lw,odp\n"))
            .hasMessageStartingWith("w.yaml:6: groups[0].access: expected lw, rw, rr, ra or ro for GPU memory");
    }
}
