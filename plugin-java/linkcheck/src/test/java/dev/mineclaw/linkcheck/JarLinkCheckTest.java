package dev.mineclaw.linkcheck;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.lang.reflect.AccessFlag;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker on small generated jars: an API, and a plugin that uses it rightly and wrongly. */
class JarLinkCheckTest {
    private static final ClassDesc BUILDER = ClassDesc.of("api.Builder");
    private static final ClassDesc WIDGET = ClassDesc.of("api.Widget");
    private static final ClassDesc OLD_RESULT = ClassDesc.of("api.Component");
    private static final ClassDesc NEW_RESULT = ClassDesc.of("api.Buildable");
    private static final ClassDesc CALLBACK = ClassDesc.of("api.Callback");

    @TempDir
    Path dir;

    /** An API whose Builder.build() returns api.Component, and a one-method Callback interface. */
    private Path api(boolean callbackGrew) throws IOException {
        byte[] builder = ClassFile.of().build(BUILDER, cls -> cls
                .withFlags(AccessFlag.PUBLIC, AccessFlag.ABSTRACT)
                .withMethod("build", MethodTypeDesc.of(OLD_RESULT), ClassFile.ACC_PUBLIC | ClassFile.ACC_ABSTRACT,
                        method -> { }));
        byte[] component = ClassFile.of().build(OLD_RESULT, cls -> cls.withFlags(AccessFlag.PUBLIC));
        byte[] callback = ClassFile.of().build(CALLBACK, cls -> {
            cls.withFlags(AccessFlag.PUBLIC, AccessFlag.INTERFACE, AccessFlag.ABSTRACT)
                    .withSuperclass(ConstantDescs.CD_Object)
                    .withMethod("call", MethodTypeDesc.of(ConstantDescs.CD_void),
                            ClassFile.ACC_PUBLIC | ClassFile.ACC_ABSTRACT, method -> { });
            if (callbackGrew) {
                cls.withMethod("cancel", MethodTypeDesc.of(ConstantDescs.CD_void),
                        ClassFile.ACC_PUBLIC | ClassFile.ACC_ABSTRACT, method -> { });
            }
        });
        return jar("api.jar", Map.of("api/Builder", builder, "api/Component", component, "api/Callback", callback));
    }

    /** A plugin class calling build() with the given return type, optionally a missing class too. */
    private Path plugin(ClassDesc buildResult, boolean touchesWidget) throws IOException {
        byte[] user = ClassFile.of().build(ClassDesc.of("plugin.User"), cls -> cls
                .withFlags(AccessFlag.PUBLIC)
                .withInterfaceSymbols(CALLBACK)
                .withMethodBody("call", MethodTypeDesc.of(ConstantDescs.CD_void), ClassFile.ACC_PUBLIC,
                        code -> code.return_())
                .withMethodBody("use", MethodTypeDesc.of(ConstantDescs.CD_void, BUILDER), ClassFile.ACC_PUBLIC,
                        code -> {
                            code.aload(1).invokevirtual(BUILDER, "build", MethodTypeDesc.of(buildResult)).pop();
                            if (touchesWidget) {
                                code.new_(WIDGET).pop();
                            }
                            code.return_();
                        }));
        return jar("plugin.jar", Map.of("plugin/User", user));
    }

    private Path jar(String name, Map<String, byte[]> classes) throws IOException {
        Path path = this.dir.resolve(name);
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(path))) {
            for (Map.Entry<String, byte[]> entry : classes.entrySet()) {
                out.putNextEntry(new JarEntry(entry.getKey() + ".class"));
                out.write(entry.getValue());
                out.closeEntry();
            }
        }
        return path;
    }

    @Test
    void aJarThatUsesTheApiAsItIsLinks() throws IOException {
        assertEquals(List.of(), JarLinkCheck.check(plugin(OLD_RESULT, false), List.of(api(false))));
    }

    @Test
    void aChangedReturnTypeIsAMissingMethod() throws IOException {
        assertEquals(List.of("plugin/User: class api/Buildable is missing",
                        "plugin/User: method api/Builder.build()Lapi/Buildable; is missing"),
                JarLinkCheck.check(plugin(NEW_RESULT, false), List.of(api(false))));
    }

    @Test
    void aMissingClassIsNamed() throws IOException {
        assertEquals(List.of("plugin/User: class api/Widget is missing"),
                JarLinkCheck.check(plugin(OLD_RESULT, true), List.of(api(false))));
    }

    @Test
    void anInterfaceThatGrewAnAbstractMethodIsNamed() throws IOException {
        assertEquals(List.of("plugin/User: does not implement api/Callback.cancel()V"),
                JarLinkCheck.check(plugin(OLD_RESULT, false), List.of(api(true))));
    }
}
