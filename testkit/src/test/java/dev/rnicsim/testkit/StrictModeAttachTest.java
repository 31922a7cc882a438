package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.simnic.SimDevice;
import org.junit.jupiter.api.Test;

/** Strict mode refuses to watch nothing: such a watch could never fail. */
class StrictModeAttachTest
{
    @Test
    void attachingNoDeviceIsRefused()
    {
        assertThatThrownBy(StrictMode::attach).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("at least one device");
        assertThatThrownBy(() -> StrictMode.attach((SimDevice[])null)).isInstanceOf(IllegalArgumentException.class);
    }
}
