package dev.rnicsim.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The device profile of the fixtures {@link TestNicExtension} injects into a test: on the test method, or on its
 * class for every test in it (the method's wins). Without it the profile is {@code connectx5}.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface NicProfile
{
    /**
     * @return a built-in profile name: {@code connectx3}, {@code connectx4-forced-ro}, {@code connectx5},
     *         {@code connectx7}, {@code e810} or {@code rxe}.
     */
    String value();
}
