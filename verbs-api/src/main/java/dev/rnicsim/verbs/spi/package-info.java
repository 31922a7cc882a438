/**
 * The service-provider interface backends implement to appear in {@link dev.rnicsim.verbs.Verbs#devices()}.
 */
package dev.rnicsim.verbs.spi;
